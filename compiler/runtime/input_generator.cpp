#include "compiler/runtime/input_generator.h"

#include <unistd.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include "core/error.h"

namespace tcprof {
namespace {

at::ScalarType scalar_type(SpecDtype d) {
  switch (d) {
    case SpecDtype::F32: return at::kFloat;
    case SpecDtype::F64: return at::kDouble;
    case SpecDtype::F16: return at::kHalf;
    case SpecDtype::BF16: return at::kBFloat16;
    case SpecDtype::I64: return at::kLong;
    case SpecDtype::I32: return at::kInt;
    case SpecDtype::I8: return at::kChar;
    case SpecDtype::U8: return at::kByte;
    case SpecDtype::Bool: return at::kBool;
  }
  return at::kFloat;
}

bool is_floating(SpecDtype d) {
  return d == SpecDtype::F32 || d == SpecDtype::F64 || d == SpecDtype::F16 || d == SpecDtype::BF16;
}

std::string bytes_text(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} bytes", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

// Generating a tensor holds the result plus a temporary of the generator's type (f32 normals,
// i64 integers). A spec that cannot fit in this machine's memory is the user's input error
// (exit 2 naming the size), not an allocator crash or an "internal error".
void check_fits_in_memory(const InputSpec& s, size_t index) {
  uint64_t numel = 1;
  bool overflow = false;
  for (int64_t d : s.sizes) overflow |= __builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel);
  const uint64_t per_element = c10::elementSize(scalar_type(s.dtype)) + (is_floating(s.dtype) ? 4 : 8);
  uint64_t bytes = 0;
  overflow |= __builtin_mul_overflow(numel, per_element, &bytes);
  const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (!overflow && static_cast<double>(bytes) <= memory) return;
  throw Error(ErrorKind::Input,
              fmt::format("--input {} ('{}') is too large: generating it needs {} ({}) and this machine has "
                          "{} of memory; use smaller sizes",
                          index, s.text, overflow ? "more than 2^64 bytes" : fmt::format("{} bytes", bytes),
                          overflow ? "over 16 EiB" : bytes_text(static_cast<double>(bytes)), bytes_text(memory)));
}

at::Tensor random_tensor(const InputSpec& s, at::Generator& gen) {
  auto options = at::TensorOptions().dtype(scalar_type(s.dtype));
  if (s.dtype == SpecDtype::Bool) {
    return at::randint(0, 2, s.sizes, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
  }
  if (is_floating(s.dtype)) {
    at::Tensor t = s.range ? at::rand(s.sizes, gen, at::TensorOptions().dtype(at::kFloat)) * (s.range->second - s.range->first) + s.range->first
                           : at::randn(s.sizes, gen, at::TensorOptions().dtype(at::kFloat));
    return t.to(options.dtype());
  }
  int64_t lo = s.range ? static_cast<int64_t>(s.range->first) : 0;
  int64_t hi = s.range ? static_cast<int64_t>(s.range->second) : 10;
  return at::randint(lo, hi, s.sizes, gen, at::TensorOptions().dtype(at::kLong)).to(options.dtype());
}

}  // namespace

InputGenerator::InputGenerator(std::vector<InputSpec> specs, std::vector<VarySpec> vary, uint64_t seed)
    : specs_(std::move(specs)), vary_(std::move(vary)), seed_(seed) {
  for (const auto& v : vary_) {
    if (v.input < 0 || static_cast<size_t>(v.input) >= specs_.size() ||
        specs_[static_cast<size_t>(v.input)].kind != InputSpec::Kind::Tensor ||
        static_cast<size_t>(v.dim) >= specs_[static_cast<size_t>(v.input)].sizes.size()) {
      throw Error(ErrorKind::Usage,
                  fmt::format("--vary {}:{}: there is no tensor input {} with a dimension {}", v.input,
                              v.dim, v.input, v.dim));
    }
  }
}

std::vector<c10::IValue> InputGenerator::make(int64_t call) {
  // One generator per call, seeded from (seed, call): call N is the same however many calls ran.
  uint64_t call_seed = seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(call) * 0xBF58476D1CE4E5B9ull + 1;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(call_seed);
  std::mt19937_64 rng(call_seed);
  std::vector<InputSpec> specs = specs_;
  for (const auto& v : vary_) {
    auto& sizes = specs[static_cast<size_t>(v.input)].sizes;
    if (!v.choices.empty()) {
      // A list is a sequence, in order and cycling, so a run reproduces a given shape history.
      sizes[static_cast<size_t>(v.dim)] = v.choices[static_cast<size_t>(call) % v.choices.size()];
    } else {
      sizes[static_cast<size_t>(v.dim)] = v.lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(v.hi - v.lo + 1));
    }
  }
  std::vector<c10::IValue> out;
  for (const auto& s : specs) {
    const size_t index = out.size();
    switch (s.kind) {
      case InputSpec::Kind::Int: out.emplace_back(static_cast<int64_t>(s.scalar)); continue;
      case InputSpec::Kind::Float: out.emplace_back(s.scalar); continue;
      case InputSpec::Kind::Bool: out.emplace_back(s.scalar != 0); continue;
      case InputSpec::Kind::Tensor: break;
    }
    check_fits_in_memory(s, index);
    at::Tensor t;
    try {
      t = random_tensor(s, gen);
    } catch (const c10::Error&) {
      // Fits in physical memory but the allocator refused (limits, other processes).
      throw Error(ErrorKind::Input, fmt::format("--input {} ('{}') could not be allocated: not enough free "
                                                "memory; use smaller sizes",
                                                index, s.text));
    }
    out.emplace_back(device_.is_cpu() ? t : t.to(device_));
  }
  return out;
}

void check_inputs_against_model(const std::vector<InputSpec>& specs, const std::vector<std::string>& names,
                                const std::vector<c10::TypePtr>& types) {
  std::string signature;
  for (size_t i = 0; i < names.size(); ++i) {
    signature += fmt::format("{}{}: {}", i ? ", " : "", names[i], types[i]->annotation_str());
  }
  if (specs.size() != names.size()) {
    throw Error(ErrorKind::Usage,
                fmt::format("the model's forward takes {} input{} ({}) but {} --input {} given",
                            names.size(), names.size() == 1 ? "" : "s", signature, specs.size(),
                            specs.size() == 1 ? "was" : "were"));
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    auto kind = types[i]->kind();
    bool ok = true;
    switch (specs[i].kind) {
      case InputSpec::Kind::Tensor: ok = kind == c10::TypeKind::TensorType || kind == c10::TypeKind::AnyType; break;
      case InputSpec::Kind::Int: ok = kind == c10::TypeKind::IntType || kind == c10::TypeKind::NumberType; break;
      case InputSpec::Kind::Float: ok = kind == c10::TypeKind::FloatType || kind == c10::TypeKind::NumberType; break;
      case InputSpec::Kind::Bool: ok = kind == c10::TypeKind::BoolType; break;
    }
    if (!ok) {
      throw Error(ErrorKind::Usage,
                  fmt::format("--input {} ('{}') does not fit argument '{}' of type {} ({})", i,
                              specs[i].text, names[i], types[i]->annotation_str(), signature));
    }
  }
}

}  // namespace tcprof
