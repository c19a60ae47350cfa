#include "bench/fuzz/fuzz_case.h"

#include <cmath>
#include <limits>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tcprof::fuzz {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Values that are easy to get wrong: NaN and infinities must propagate the same way, signed
// zeros, and halves where round() must pick the even neighbour.
at::Tensor with_specials(at::Tensor base, at::Generator& gen) {
  const int64_t n = base.numel();
  if (n == 0) return base;
  static const double kSpecials[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity(), 0.0, -0.0, 0.5, 2.5, -1.5};
  at::Tensor flat = base.view({-1});
  at::Tensor picks = at::randint(0, n, {std::max<int64_t>(1, n / 16)}, gen, at::kLong);
  at::Tensor which = at::randint(0, 8, {picks.numel()}, gen, at::kLong);
  for (int64_t i = 0; i < picks.numel(); ++i) {
    flat[picks[i].item<int64_t>()] = kSpecials[which[i].item<int64_t>()];
  }
  return base;
}

}  // namespace

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Transposed: return "transposed";
    case Layout::Strided: return "strided";
    case Layout::Offset: return "offset";
    case Layout::Broadcast: return "broadcast";
  }
  return "?";
}

at::Tensor make_tensor(const TensorRecipe& r, int64_t dynamic_size, uint64_t salt) {
  std::vector<int64_t> sizes = r.sizes;
  if (dynamic_size >= 0) {
    for (int d : r.dynamic_dims) sizes[static_cast<size_t>(d)] = dynamic_size;
  }
  const int rank = static_cast<int>(sizes.size());
  const int dim = rank == 0 ? 0 : std::min(r.dim, rank - 1);
  Layout layout = rank == 0 ? Layout::Contiguous : r.layout;
  if (layout == Layout::Transposed && rank < 2) layout = Layout::Contiguous;
  // The contiguous tensor the input is a view of.
  std::vector<int64_t> base_sizes = sizes;
  switch (layout) {
    case Layout::Contiguous: break;
    case Layout::Transposed: std::swap(base_sizes[static_cast<size_t>(dim)], base_sizes.back()); break;
    case Layout::Strided: base_sizes[static_cast<size_t>(dim)] *= 2; break;
    case Layout::Offset: base_sizes[static_cast<size_t>(dim)] += 1; break;
    case Layout::Broadcast: base_sizes[static_cast<size_t>(dim)] = 1; break;
  }
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(splitmix64(r.seed ^ splitmix64(salt + 1)));
  at::Tensor base;
  if (at::isFloatingType(r.dtype)) {
    base = at::randn(base_sizes, gen, at::TensorOptions().dtype(r.dtype)) * r.scale;
    if (r.min_abs >= 0) base = base.abs() + r.min_abs;
    if (r.specials) base = with_specials(base, gen);
  } else if (r.dtype == at::kBool) {
    base = at::randint(0, 2, base_sizes, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
  } else {
    auto s = static_cast<int64_t>(r.scale);
    base = at::randint(-s, s + 1, base_sizes, gen, at::TensorOptions().dtype(r.dtype));
  }
  switch (layout) {
    case Layout::Contiguous: return base;
    case Layout::Transposed: return base.transpose(dim, rank - 1);
    case Layout::Strided: return base.slice(dim, 0, std::numeric_limits<int64_t>::max(), 2);
    case Layout::Offset: return base.slice(dim, 1);
    case Layout::Broadcast: return base.expand(sizes);
  }
  return base;
}

std::string describe_tensor(const at::Tensor& t) {
  return fmt::format("{}[{}] strides [{}] offset {}", c10::toString(t.scalar_type()), fmt::join(t.sizes(), ","),
                     fmt::join(t.strides(), ","), t.storage_offset());
}

std::string describe_recipe(const TensorRecipe& r) {
  std::string s = fmt::format("{}[{}] {}", c10::toString(r.dtype), fmt::join(r.sizes, ","), layout_name(r.layout));
  if (r.layout != Layout::Contiguous) s += fmt::format(" dim {}", r.dim);
  if (!r.dynamic_dims.empty()) s += fmt::format(", dynamic dims [{}]", fmt::join(r.dynamic_dims, ","));
  if (r.specials) s += ", with NaN/inf/ties";
  s += fmt::format(", scale {}", r.scale);
  if (r.min_abs >= 0) s += fmt::format(", |x|+{}", r.min_abs);
  return s + fmt::format(", seed {}", r.seed);
}

std::string describe_case(const FuzzCase& c, bool with_layouts) {
  std::string s;
  if (!c.name.empty()) s += "case: " + c.name + "\n";
  s += fmt::format("generator seed: {}\n", c.seed);
  s += "source:\n" + c.source;
  if (!c.params.empty()) s += "parameters and buffers:\n";
  for (const auto& p : c.params) {
    s += fmt::format("  self.{} ({}): {}\n", p.name, p.buffer ? "buffer" : "parameter", describe_recipe(p.recipe));
  }
  s += "inputs:\n";
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    s += fmt::format("  x{}: {}", i, describe_recipe(c.inputs[i]));
    s += with_layouts ? " -> " + describe_tensor(make_tensor(c.inputs[i])) + "\n" : "\n";
  }
  if (!c.dynamic_sizes.empty()) {
    s += fmt::format("later calls: dynamic dims = {} ({})\n", fmt::join(c.dynamic_sizes, ", then "),
                     c.declare_dynamic ? "declared dynamic" : "automatic dynamic");
  }
  return s;
}

}  // namespace tcprof::fuzz
