#include "compiler/runtime/input_spec.h"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "core/error.h"

namespace tcprof {
namespace {

constexpr const char* kForms =
    "expected DTYPE[D0,D1,...] with an optional (LO,HI) range, e.g. f32[8,3,224,224] or "
    "i64[4,128](0,1024), or int:N, float:X, bool:true|false; dtypes: f32 f64 f16 bf16 i64 i32 "
    "i8 u8 bool";

struct DtypeName {
  std::string_view name;
  SpecDtype dtype;
};
constexpr DtypeName kDtypes[] = {
    {"f32", SpecDtype::F32},      {"float32", SpecDtype::F32},  {"float", SpecDtype::F32},
    {"f64", SpecDtype::F64},      {"float64", SpecDtype::F64},  {"double", SpecDtype::F64},
    {"f16", SpecDtype::F16},      {"float16", SpecDtype::F16},  {"half", SpecDtype::F16},
    {"bf16", SpecDtype::BF16},    {"bfloat16", SpecDtype::BF16}, {"i64", SpecDtype::I64},
    {"int64", SpecDtype::I64},    {"long", SpecDtype::I64},     {"i32", SpecDtype::I32},
    {"int32", SpecDtype::I32},    {"i8", SpecDtype::I8},        {"int8", SpecDtype::I8},
    {"u8", SpecDtype::U8},        {"uint8", SpecDtype::U8},     {"bool", SpecDtype::Bool},
};

[[noreturn]] void bad(std::string_view text, std::string_view why) {
  throw Error(ErrorKind::Usage, fmt::format("bad input spec '{}': {}; {}", text, why, kForms));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool parse_int(std::string_view s, int64_t& out) {
  s = trim(s);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_double(std::string_view s, double& out) {
  std::string copy(trim(s));
  if (copy.empty()) return false;
  char* end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

}  // namespace

std::string_view dtype_name(SpecDtype dtype) {
  for (const auto& d : kDtypes) {
    if (d.dtype == dtype) return d.name;
  }
  return "?";
}

InputSpec parse_input_spec(std::string_view raw) {
  std::string_view text = trim(raw);
  InputSpec spec;
  spec.text = std::string(text);
  size_t colon = text.find(':');
  if (colon != std::string_view::npos && text.find('[') == std::string_view::npos) {
    std::string_view kind = text.substr(0, colon), value = text.substr(colon + 1);
    if (kind == "int") {
      int64_t v;
      if (!parse_int(value, v)) bad(text, "int: needs a whole number");
      spec.kind = InputSpec::Kind::Int;
      spec.scalar = static_cast<double>(v);
    } else if (kind == "float") {
      if (!parse_double(value, spec.scalar)) bad(text, "float: needs a number");
      spec.kind = InputSpec::Kind::Float;
    } else if (kind == "bool") {
      if (value != "true" && value != "false") bad(text, "bool: needs true or false");
      spec.kind = InputSpec::Kind::Bool;
      spec.scalar = value == "true" ? 1 : 0;
    } else {
      bad(text, fmt::format("unknown scalar kind '{}'", kind));
    }
    return spec;
  }
  size_t open = text.find('['), close = text.find(']');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    bad(text, "missing [sizes]");
  }
  std::string_view dtype = text.substr(0, open);
  bool found = false;
  for (const auto& d : kDtypes) {
    if (d.name == dtype) {
      spec.dtype = d.dtype;
      found = true;
    }
  }
  if (!found) bad(text, fmt::format("unknown dtype '{}'", dtype));
  std::string_view dims = trim(text.substr(open + 1, close - open - 1));
  if (!dims.empty()) {
    for (auto d : split(dims, ',')) {
      int64_t v;
      if (!parse_int(d, v) || v < 0) bad(text, fmt::format("size '{}' is not a whole number >= 0", trim(d)));
      spec.sizes.push_back(v);
    }
  }
  std::string_view rest = trim(text.substr(close + 1));
  if (!rest.empty()) {
    if (rest.front() != '(' || rest.back() != ')') bad(text, "the range must look like (LO,HI)");
    auto parts = split(rest.substr(1, rest.size() - 2), ',');
    double lo, hi;
    if (parts.size() != 2 || !parse_double(parts[0], lo) || !parse_double(parts[1], hi) || hi <= lo) {
      bad(text, "the range must be (LO,HI) with LO < HI");
    }
    spec.range = std::make_pair(lo, hi);
  }
  return spec;
}

DimRef parse_dim_ref(std::string_view raw) {
  std::string_view text = trim(raw);
  auto parts = split(text, ':');
  int64_t i, d;
  if (parts.size() != 2 || !parse_int(parts[0], i) || !parse_int(parts[1], d) || i < 0 || d < 0) {
    throw Error(ErrorKind::Usage,
                fmt::format("bad dimension '{}': expected INPUT:DIM, e.g. 0:1 for dimension 1 of "
                            "the first input",
                            text));
  }
  return {static_cast<int>(i), static_cast<int>(d)};
}

VarySpec parse_vary_spec(std::string_view raw) {
  std::string_view text = trim(raw);
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    throw Error(ErrorKind::Usage, fmt::format("bad --vary '{}': expected I:D=LO..HI or I:D=a,b,c", text));
  }
  DimRef ref = parse_dim_ref(text.substr(0, eq));
  VarySpec v;
  v.input = ref.input;
  v.dim = ref.dim;
  std::string_view values = text.substr(eq + 1);
  size_t dots = values.find("..");
  auto fail = [&] {
    throw Error(ErrorKind::Usage,
                fmt::format("bad --vary '{}': sizes must be LO..HI with 0 <= LO <= HI, or a list "
                            "a,b,c of whole numbers",
                            text));
  };
  if (dots != std::string_view::npos) {
    if (!parse_int(values.substr(0, dots), v.lo) || !parse_int(values.substr(dots + 2), v.hi) ||
        v.lo < 0 || v.hi < v.lo) {
      fail();
    }
  } else {
    for (auto p : split(values, ',')) {
      int64_t s;
      if (!parse_int(p, s) || s < 0) fail();
      v.choices.push_back(s);
    }
  }
  return v;
}

std::string describe(const InputSpec& spec) {
  switch (spec.kind) {
    case InputSpec::Kind::Int: return fmt::format("int:{}", static_cast<int64_t>(spec.scalar));
    case InputSpec::Kind::Float: return fmt::format("float:{}", spec.scalar);
    case InputSpec::Kind::Bool: return spec.scalar != 0 ? "bool:true" : "bool:false";
    case InputSpec::Kind::Tensor: break;
  }
  return fmt::format("{}[{}]", dtype_name(spec.dtype), fmt::join(spec.sizes, ","));
}

}  // namespace tcprof
