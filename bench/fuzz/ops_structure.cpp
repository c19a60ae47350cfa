// The generator's row ops (softmax, layer norm, reductions, batch norm), views and in-place ops
// (see generator_ops.h).
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/fuzz/generator_ops.h"

namespace tcprof::fuzz {
namespace {

// The sizes list for reshape/view: literals, and -1 for the one size that is not static.
std::optional<std::string> sizes_list(const Shape& shape) {
  std::vector<std::string> parts;
  int free = 0;
  for (const auto& d : shape) {
    if (d.sym != 0) ++free;
    parts.push_back(d.sym != 0 ? "-1" : std::to_string(d.size));
  }
  if (free > 1) return std::nullopt;
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

// An intermediate to write: the subject if it may be written, else any value that may.
int writable_target(GeneratorState& g, int si) {
  if (g.can_write(var(g, si))) return si;
  std::vector<int> ok;
  for (size_t i = 0; i < g.vars().size(); ++i) {
    if (g.can_write(g.vars()[i])) ok.push_back(static_cast<int>(i));
  }
  return ok.empty() ? -1 : g.choose(ok);
}

}  // namespace

// ---- rows: softmax, layer norm, reductions, batch norm ---------------------------------------

bool op_softmax(GeneratorState& g, int si) {
  const Var s = var(g, si);
  const int r = static_cast<int>(s.shape.size());
  if (!is_float(s.dtype) || r == 0) return false;
  std::string d;
  if (g.chance(0.85)) d = g.chance(0.5) ? "-1" : std::to_string(r - 1);
  else if (r >= 2) d = std::to_string(g.pick(r - 1));  // not the last dim: a LibTorch call
  else return false;
  const bool log = g.chance(0.4);
  std::string e = log ? (g.chance(0.5) ? fmt::format("torch.log_softmax({}, {})", s.name, d)
                                        : fmt::format("{}.log_softmax(dim={})", s.name, d))
                      : (g.chance(0.5) ? fmt::format("torch.softmax({}, {})", s.name, d)
                                        : fmt::format("{}.softmax({})", s.name, d));
  Var v = like(s, s.dtype, log ? 2 * s.bound + 12 : 1, false);
  v.dependence = std::max(s.dependence, Dependence::Reduction);
  return emit(g, e, v, log ? "log_softmax" : "softmax", {si});
}

bool op_layer_norm(GeneratorState& g, int si) {
  const Var s = var(g, si);
  const int r = static_cast<int>(s.shape.size());
  if (!is_float(s.dtype) || r == 0) return false;
  const int k = r >= 2 && g.chance(0.35) ? 2 : 1;
  std::vector<int64_t> sizes;
  Shape wshape;
  int64_t n = 1;
  for (int d = r - k; d < r; ++d) {
    if (s.shape[static_cast<size_t>(d)].sym != 0) return false;  // normalized_shape is a literal
    sizes.push_back(s.shape[static_cast<size_t>(d)].size);
    wshape.push_back(s.shape[static_cast<size_t>(d)]);
    n *= sizes.back();
  }
  // A one-element row normalises to exactly 0 in the kernels but to rounding noise in eager
  // (+-1e-9 in f32, +-6e-15 in f64: x * rstd - mean * rstd); times an injected infinity that is
  // NaN against +-inf, and a square root after it makes f64's noise 1e-7 (fuzz case
  // 98040317121050). Each is right for its rounding; in f32 the f64 oracle tells which is closer,
  // in f64 there is no more precise oracle to ask.
  if (n == 1 && (g.specials || s.dtype == ST::Double)) return false;
  std::string w = "None", b = "None";
  int affine = g.weighted({3, 2, 5});  // none, weight, weight and bias
  if (affine >= 1) w = var(g, g.new_param(wshape, s.dtype, g.chance(0.4))).name;
  if (affine == 2) b = var(g, g.new_param(wshape, s.dtype, g.chance(0.4))).name;
  std::string eps = g.choose<std::string>({"1e-05", "1e-05", "0.001", "0.1"});
  std::string e = g.chance(0.8) ? fmt::format("torch.layer_norm({}, [{}], {}, {}, {})", s.name, dims_text(sizes), w, b, eps)
                                 : fmt::format("torch.layer_norm({}, [{}], {}, {})", s.name, dims_text(sizes), w, b);
  double bound = std::sqrt(static_cast<double>(std::max<int64_t>(n, 1))) * (affine >= 1 ? kNormalBound : 1) +
                 (affine == 2 ? kNormalBound : 0);
  Var v = like(s, s.dtype, bound, false);
  v.dependence = Dependence::Normalization;
  return emit(g, e, v, "layer_norm", {si});
}

bool op_reduce(GeneratorState& g, int si) {
  const Var s = var(g, si);
  const int r = static_cast<int>(s.shape.size());
  const bool mean = is_float(s.dtype) && g.chance(0.4);
  const ST out = is_float(s.dtype) ? s.dtype : ST::Long;  // sums of ints and bools are int64
  const std::string fn = mean ? "mean" : "sum";
  std::vector<int> dims;
  switch (g.weighted({8, 1, r >= 2 ? 1 : 0})) {
    case 0: {  // trailing dims: a row kernel
      if (r == 0) return false;
      int k = 1 + g.weighted({6, 3, 1, 1}) % r;
      for (int d = r - k; d < r; ++d) dims.push_back(d);
      break;
    }
    case 1: break;  // everything
    default: dims.push_back(g.pick(r - 1));  // a leading dim: a column kernel for a float sum over dim 0, else a LibTorch call
  }
  Shape shape;
  double n = 1;
  const bool keepdim = !dims.empty() && g.chance(0.4);
  for (int d = 0; d < r; ++d) {
    bool reduced = dims.empty() || std::find(dims.begin(), dims.end(), d) != dims.end();
    if (reduced) n *= static_cast<double>(numel_estimate({s.shape[static_cast<size_t>(d)]}));
    if (!reduced) shape.push_back(s.shape[static_cast<size_t>(d)]);
    else if (keepdim) shape.push_back(Dim{1, 0});
  }
  std::string e;
  if (dims.empty()) {
    e = g.chance(0.5) ? fmt::format("{}.{}()", s.name, fn) : fmt::format("torch.{}({})", fn, s.name);
  } else {
    std::vector<int64_t> shown;
    bool negative = g.chance(0.5);
    for (int d : dims) shown.push_back(negative ? d - r : d);
    std::string list = fmt::format("[{}]", dims_text(shown));
    if (dims.size() == 1 && !keepdim && g.chance(0.3)) list = std::to_string(shown[0]);
    e = g.chance(0.5) ? fmt::format("torch.{}({}, {}, keepdim={})", fn, s.name, list, keepdim ? "True" : "False")
                       : fmt::format("{}.{}(dim={}, keepdim={})", s.name, fn, list, keepdim ? "True" : "False");
  }
  Var v = like(s, out, mean ? s.bound : n * s.bound, !is_float(out));
  v.shape = shape;
  v.dependence = std::max(s.dependence, Dependence::Reduction);
  return emit(g, e, v, fn, {si});
}

bool op_batch_norm(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (!is_float(s.dtype) || s.shape.size() < 2 || s.shape[1].sym != 0 || s.shape[1].size < 1) return false;
  const Shape channels = {s.shape[1]};
  std::string w = "None", b = "None";
  if (g.chance(0.7)) w = var(g, g.new_param(channels, s.dtype, false)).name;
  if (g.chance(0.7)) b = var(g, g.new_param(channels, s.dtype, false)).name;
  std::string mean = var(g, g.new_param(channels, s.dtype, true)).name;
  std::string variance = var(g, g.new_param(channels, s.dtype, true, /*min_abs=*/0.5)).name;
  std::string eps = g.choose<std::string>({"1e-05", "0.001"});
  std::string e = fmt::format("torch.batch_norm({}, {}, {}, {}, {}, False, 0.1, {}, False)", s.name, w, b, mean, variance, eps);
  double bound = (s.bound + kNormalBound) / std::sqrt(0.5) * (w != "None" ? kNormalBound : 1) + (b != "None" ? kNormalBound : 0);
  return emit(g, e, like(s, s.dtype, bound, false), "batch_norm", {si});
}

// conv2d over an NCHW value with static C, H, W: dense, grouped or depthwise, strided, dilated,
// padded. The weight is scaled by 1/fan_in so that values keep their magnitude through chains.
bool op_conv2d(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (!is_float(s.dtype) || s.shape.size() != 4) return false;
  for (size_t d = 1; d < 4; ++d) {
    if (s.shape[d].sym != 0 || s.shape[d].size < 1) return false;
  }
  const int64_t c = s.shape[1].size, h = s.shape[2].size, w = s.shape[3].size;
  std::vector<int64_t> divisors;
  for (int64_t k = 2; k < c; ++k) {
    if (c % k == 0) divisors.push_back(k);
  }
  int64_t groups = 1;
  int kind = g.weighted({6, 3, divisors.empty() ? 0 : 1});
  if (kind == 1) groups = c;
  if (kind == 2) groups = g.choose(divisors);
  const int64_t oc = groups * g.choose<int64_t>({1, 1, 2, 3}) * (groups == 1 ? g.choose<int64_t>({1, 4, 8, 16}) : 1);
  auto window = [&](int64_t size, int64_t* k, int64_t* st, int64_t* p, int64_t* dil) {
    *k = g.choose<int64_t>({1, 3, 3, 5});
    *st = g.chance(0.3) ? 2 : 1;
    *dil = g.chance(0.15) ? 2 : 1;
    *p = g.pick(static_cast<int>(*dil * (*k / 2)) + 1);
    return (size + 2 * *p - *dil * (*k - 1) - 1) / *st + 1;
  };
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  const int64_t oh = window(h, &kh, &sh, &ph, &dh), ow = window(w, &kw, &sw, &pw, &dw);
  if (oh < 1 || ow < 1) return false;
  const int64_t fan_in = c / groups * kh * kw;
  const int wi = g.new_param({Dim{oc, 0}, Dim{c / groups, 0}, Dim{kh, 0}, Dim{kw, 0}}, s.dtype, false);
  g.fuzz_case().params.back().recipe.scale = 1.0 / static_cast<double>(fan_in);
  g.vars()[static_cast<size_t>(wi)].bound = kNormalBound / static_cast<double>(fan_in);
  std::string bias = "None";
  if (g.chance(0.6)) bias = var(g, g.new_param({Dim{oc, 0}}, s.dtype, false)).name;
  std::string e = fmt::format("torch.conv2d({}, {}, {}, [{}, {}], [{}, {}], [{}, {}], {})", s.name, var(g, wi).name, bias,
                              sh, sw, ph, pw, dh, dw, groups);
  Var v = like(s, s.dtype, s.bound * kNormalBound + (bias != "None" ? kNormalBound : 0), false);
  v.shape = {s.shape[0], Dim{oc, 0}, Dim{oh, 0}, Dim{ow, 0}};
  v.contiguous = true;
  v.dependence = std::max(s.dependence, Dependence::Reduction);
  return emit(g, e, v, "conv2d", {si});
}

// max_pool2d over a 4-D value with static C, H, W: kernel 1-3, the default stride (the kernel's)
// or 1 or 2, padding up to half the kernel, dilation, ceil mode.
bool op_max_pool2d(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (!is_float(s.dtype) || s.shape.size() != 4) return false;
  for (size_t d = 1; d < 4; ++d) {
    if (s.shape[d].sym != 0 || s.shape[d].size < 1) return false;
  }
  const bool ceil_mode = g.chance(0.4), default_stride = g.chance(0.4);
  auto window = [&](int64_t size, int64_t* k, int64_t* st, int64_t* p, int64_t* dil) {
    *k = g.choose<int64_t>({1, 2, 3, 3});
    *st = default_stride ? *k : g.choose<int64_t>({1, 2, 2});
    *dil = g.chance(0.15) ? 2 : 1;
    *p = g.pick(static_cast<int>(*k / 2) + 1);
    const int64_t span = size + 2 * *p - *dil * (*k - 1) - 1;
    if (span < 0) return int64_t{0};
    int64_t out = (ceil_mode ? (span + *st - 1) / *st : span / *st) + 1;
    if (ceil_mode && (out - 1) * *st >= size + *p) --out;  // the last window must start inside
    return out;
  };
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  const int64_t oh = window(s.shape[2].size, &kh, &sh, &ph, &dh), ow = window(s.shape[3].size, &kw, &sw, &pw, &dw);
  if (oh < 1 || ow < 1) return false;
  std::string e = default_stride && ph == 0 && pw == 0 && dh == 1 && dw == 1 && !ceil_mode
                      ? fmt::format("torch.max_pool2d({}, [{}, {}])", s.name, kh, kw)
                      : fmt::format("torch.max_pool2d({}, [{}, {}], [{}, {}], [{}, {}], [{}, {}], {})", s.name, kh, kw, sh, sw,
                                    ph, pw, dh, dw, ceil_mode ? "True" : "False");
  Var v = like(s, s.dtype, s.bound, s.exact);
  v.shape = {s.shape[0], s.shape[1], Dim{oh, 0}, Dim{ow, 0}};
  v.contiguous = true;
  v.dependence = std::max(s.dependence, Dependence::Reduction);
  return emit(g, e, v, "max_pool2d", {si});
}

// cat along channels of the subject and one or two 4-D values of the same batch, height and width
// (often convolution outputs: a fire module), or of the subject with itself.
bool op_cat_channels(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (!is_float(s.dtype) || s.shape.size() != 4 || s.shape[1].sym != 0) return false;
  std::vector<int> partners;
  for (int i = 0; i < static_cast<int>(g.vars().size()); ++i) {
    const Var& p = var(g, i);
    if (i != si && p.dtype == s.dtype && p.shape.size() == 4 && same_dim(p.shape[0], s.shape[0]) && p.shape[1].sym == 0 &&
        same_dim(p.shape[2], s.shape[2]) && same_dim(p.shape[3], s.shape[3])) {
      partners.push_back(i);
    }
  }
  std::vector<int> parts = {si, partners.empty() || g.chance(0.15) ? si : g.choose(partners)};
  if (!partners.empty() && g.chance(0.3)) parts.push_back(g.choose(partners));
  if (g.chance(0.5)) std::swap(parts[0], parts[1]);
  std::vector<std::string> names;
  Var v = like(s, s.dtype, 0, true);
  int64_t channels = 0;
  for (int p : parts) {
    const Var& x = var(g, p);
    names.push_back(x.name);
    channels += x.shape[1].size;
    v.bound = std::max(v.bound, x.bound);
    v.exact = v.exact && x.exact;  // dependence, erf error and constancy: emit_compute, from the reads
  }
  v.shape[1] = Dim{channels, 0};
  v.contiguous = true;
  return emit(g, fmt::format("torch.cat([{}], 1)", fmt::join(names, ", ")), v, "cat", parts);
}

// linear over the last dim (a transformer's projections: constant weight, bias or not), on any
// rank and stride; the weight is scaled by 1/K so values keep their magnitude.
bool op_linear(GeneratorState& g, int si) {
  const Var s = var(g, si);
  if (!is_float(s.dtype) || s.shape.empty() || s.shape.back().sym != 0 || s.shape.back().size < 1) return false;
  const int64_t k = s.shape.back().size, n = g.choose<int64_t>({1, 3, 8, 17, 32});
  const int wi = g.new_param({Dim{n, 0}, Dim{k, 0}}, s.dtype, false);
  g.fuzz_case().params.back().recipe.scale = 1.0 / static_cast<double>(k);
  g.vars()[static_cast<size_t>(wi)].bound = kNormalBound / static_cast<double>(k);
  std::string bias = "None";
  if (g.chance(0.6)) bias = var(g, g.new_param({Dim{n, 0}}, s.dtype, false)).name;
  std::string e = fmt::format("torch.linear({}, {}, {})", s.name, var(g, wi).name, bias);  // aten::linear
  // An activation on the linear's output alone: the cpp backend's GEMM computes a GELU in its
  // output pass; the cuda backend gives cuBLASLt a tanh-GELU or a ReLU as its epilogue.
  const int gelu = g.weighted({6, 3, 1, 2});  // none, erf, tanh, relu
  if (gelu == 1) e = fmt::format("torch.gelu({})", e);
  if (gelu == 2) e = fmt::format("torch.gelu({}, approximate='tanh')", e);
  if (gelu == 3) e = fmt::format("torch.relu({})", e);
  Var v = like(s, s.dtype, s.bound * kNormalBound + (bias != "None" ? kNormalBound : 0) + (gelu > 0 ? 1 : 0), false);
  v.shape.back() = Dim{n, 0};
  v.contiguous = true;
  v.dependence = std::max(s.dependence, Dependence::Reduction);
  return emit(g, e, v, gelu == 0 ? "linear" : gelu == 3 ? "linear_relu" : "linear_gelu", {si});
}

// Self-attention over the last two dims (q = k = v = the subject): matmul, a scale that keeps the
// scores O(1) (a multiply or a divide), sometimes a constant mask keeping one range of keys per
// row (causal with an offset, a band, key padding), softmax, matmul: the fused attention kernel's
// pattern (plan_attention.h) on whatever shapes, strides and values the generator makes.
bool op_attention(GeneratorState& g, int si) {
  const Var s = var(g, si);
  const size_t r = s.shape.size();
  if ((s.dtype != ST::Float && s.dtype != ST::Double) || r < 2 || s.shape[r - 1].sym != 0 || s.shape[r - 2].sym != 0) {
    return false;
  }
  const int64_t t = s.shape[r - 2].size, d = s.shape[r - 1].size;
  if (t < 1 || d < 1) return false;
  const double b = std::max(s.bound, 1.0);
  const double scale = std::min(1.0, 4.0 / (b * b * static_cast<double>(d)));
  std::string scores = fmt::format("torch.matmul({0}, {0}.transpose(-2, -1))", s.name);
  scores = g.chance(0.5) ? fmt::format("({} * {:.9g})", scores, scale) : fmt::format("({} / {:.9g})", scores, 1.0 / scale);
  switch (g.weighted({3, 3, 2, 2})) {
    case 1: scores += fmt::format(".masked_fill(torch.ones({0}, {0}).tril({1}) == 0, float('-inf'))", t, g.pick(3)); break;
    case 2: scores += fmt::format(".masked_fill(torch.ones({0}, {0}).tril(0).triu(-{1}) == 0, float('-inf'))", t, g.pick(4)); break;
    case 3: scores += fmt::format(".masked_fill(torch.arange({}) >= {}, float('-inf'))", t, 1 + g.pick(static_cast<int>(t))); break;
    default: break;
  }
  std::string e = fmt::format("torch.matmul(torch.softmax({}, -1), {})", scores, s.name);
  Var v = like(s, s.dtype, s.bound, false);
  v.contiguous = true;
  v.dependence = std::max(s.dependence, Dependence::Reduction);
  return emit(g, e, v, "attention", {si});
}

// ---- views ----------------------------------------------------------------------------------

bool op_contiguous(GeneratorState& g, int si) {
  Var v = var(g, si);
  v.contiguous = true;
  return g.emit_view(v.name + ".contiguous()", v, "contiguous", si, /*ambiguous=*/true) >= 0;
}

bool op_transpose(GeneratorState& g, int si) {
  const Var s = var(g, si);
  const int r = static_cast<int>(s.shape.size());
  if (r < 2) return false;
  int a = g.pick(r), b = g.pick(r - 1);
  if (b >= a) ++b;
  Var v = s;
  std::swap(v.shape[static_cast<size_t>(a)], v.shape[static_cast<size_t>(b)]);
  v.contiguous = false;
  std::string e = r == 2 && g.chance(0.3) ? s.name + ".t()"
                  : g.chance(0.5) ? fmt::format("{}.transpose({}, {})", s.name, a - (g.chance(0.5) ? r : 0), b)
                                   : fmt::format("torch.transpose({}, {}, {})", s.name, a, b - (g.chance(0.5) ? r : 0));
  return g.emit_view(e, v, "transpose", si) >= 0;
}

bool op_permute(GeneratorState& g, int si) {
  const Var s = var(g, si);
  const int r = static_cast<int>(s.shape.size());
  if (r < 3) return false;
  std::vector<int64_t> perm(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) perm[static_cast<size_t>(i)] = i;
  for (int i = r - 1; i > 0; --i) std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(g.pick(i + 1))]);
  bool identity = true;
  for (int i = 0; i < r; ++i) identity = identity && perm[static_cast<size_t>(i)] == i;
  if (identity) return false;
  Var v = s;
  for (int i = 0; i < r; ++i) v.shape[static_cast<size_t>(i)] = s.shape[static_cast<size_t>(perm[static_cast<size_t>(i)])];
  v.contiguous = false;
  return g.emit_view(fmt::format("{}.permute([{}])", s.name, dims_text(perm)), v, "permute", si) >= 0;
}

bool op_unsqueeze(GeneratorState& g, int si) {
  const Var s = var(g, si);
  const int r = static_cast<int>(s.shape.size());
  if (r >= 5) return false;
  int d = g.pick(r + 1);  // position in the result
  Var v = s;
  v.shape.insert(v.shape.begin() + d, Dim{1, 0});
  int shown = g.chance(0.3) ? d - (r + 1) : d;
  std::string e = g.chance(0.6) ? fmt::format("{}.unsqueeze({})", s.name, shown) : fmt::format("torch.unsqueeze({}, {})", s.name, shown);
  return g.emit_view(e, v, "unsqueeze", si) >= 0;
}

bool op_slice(GeneratorState& g, int si) {
  const Var s = var(g, si);
  const int r = static_cast<int>(s.shape.size());
  std::vector<int> dims;
  for (int d = 0; d < r; ++d) {
    if (s.shape[static_cast<size_t>(d)].sym == 0 && s.shape[static_cast<size_t>(d)].size >= 2) dims.push_back(d);
  }
  if (dims.empty()) return false;
  const int d = g.choose(dims);
  const int64_t n = s.shape[static_cast<size_t>(d)].size;
  std::string range;
  int64_t size;
  switch (g.pick(5)) {
    case 0: range = "1:"; size = n - 1; break;
    case 1: range = "::2"; size = (n + 1) / 2; break;
    case 2: {
      // A slice with an end crashes capture when dims are dynamic (FuzzBugs.DISABLED_SliceOfDynamic...).
      bool dynamic_case = !g.fuzz_case().dynamic_sizes.empty();
      if (n < 3 || (dynamic_case && !g.options().known_bug_patterns)) return false;
      range = fmt::format("1:{}", n - 1);
      size = n - 2;
      break;
    }
    case 3: {
      int64_t k = 1 + g.pick(static_cast<int>(n - 1));
      range = fmt::format("-{}:", k);
      size = k;
      break;
    }
    default: {
      int64_t start = g.pick(static_cast<int>(n - 1)), len = 1 + g.pick(static_cast<int>(n - start));
      Var v = s;
      v.shape[static_cast<size_t>(d)].size = len;
      v.contiguous = false;
      return g.emit_view(fmt::format("{}.narrow({}, {}, {})", s.name, d, start, len), v, "slice", si) >= 0;
    }
  }
  std::string index = d == r - 1 && r > 1 && g.chance(0.5) ? "..., " + range : std::string();
  if (index.empty()) {
    for (int i = 0; i < d; ++i) index += ":, ";
    index += range;
  }
  Var v = s;
  v.shape[static_cast<size_t>(d)].size = size;
  v.contiguous = false;
  return g.emit_view(fmt::format("{}[{}]", s.name, index), v, "slice", si) >= 0;
}

bool op_expand(GeneratorState& g, int si) {
  const Var s = var(g, si);
  Var v = s;
  v.overlapping = true;
  v.contiguous = false;
  if (g.chance(0.4)) {  // expand_as a value it broadcasts to (dynamic dims included)
    std::vector<int> targets;
    for (size_t i = 0; i < g.vars().size(); ++i) {
      const Var& t = g.vars()[i];
      auto b = broadcast(s.shape, t.shape);
      if (b && same_shape(*b, t.shape) && !same_shape(s.shape, t.shape)) targets.push_back(static_cast<int>(i));
    }
    if (!targets.empty()) {
      const Var& t = var(g, g.choose(targets));
      v.shape = t.shape;
      return g.emit_view(fmt::format("{}.expand_as({})", s.name, t.name), v, "expand", si) >= 0;
    }
  }
  std::vector<std::string> sizes;
  bool changed = false;
  for (auto& d : v.shape) {
    if (d.sym == 0 && d.size == 1 && g.chance(0.6)) {
      d.size = g.choose<int64_t>({2, 3, 5});
      sizes.push_back(std::to_string(d.size));
      changed = true;
    } else {
      sizes.push_back("-1");
    }
  }
  if (v.shape.size() < 4 && (g.chance(0.3) || !changed)) {
    int64_t lead = g.choose<int64_t>({2, 3});
    v.shape.insert(v.shape.begin(), Dim{lead, 0});
    sizes.insert(sizes.begin(), std::to_string(lead));
    changed = true;
  }
  if (!changed) return false;
  std::string e = g.chance(0.6) ? fmt::format("{}.expand([{}])", s.name, fmt::join(sizes, ", "))
                                 : fmt::format("{}.expand({})", s.name, fmt::join(sizes, ", "));
  return g.emit_view(e, v, "expand", si) >= 0;
}

bool op_reshape(GeneratorState& g, int si) {
  const Var s = var(g, si);
  const int r = static_cast<int>(s.shape.size());
  Var v = s;
  std::string view_form;  // an always-a-view spelling, if any
  switch (g.pick(3)) {
    case 0: {  // merge two neighbours
      if (r < 2) return false;
      int d = g.pick(r - 1);
      const Dim a = s.shape[static_cast<size_t>(d)], b = s.shape[static_cast<size_t>(d) + 1];
      Dim merged{a.size * b.size, 0};
      if (a.sym == 0 && a.size == 1) merged = b;
      else if (b.sym == 0 && b.size == 1) merged = a;
      else if (a.sym != 0 || b.sym != 0) merged.sym = g.new_sym();
      v.shape.erase(v.shape.begin() + d, v.shape.begin() + d + 2);
      v.shape.insert(v.shape.begin() + d, merged);
      if (!sizes_list(v.shape) || g.chance(0.3)) {
        v.contiguous = s.contiguous;
        return g.emit_view(fmt::format("{}.flatten({}, {})", s.name, d, d + 1), v, "reshape", si, true) >= 0;
      }
      break;
    }
    case 1: {  // split a static dim
      std::vector<std::pair<int, int64_t>> splits;
      for (int d = 0; d < r; ++d) {
        const Dim& x = s.shape[static_cast<size_t>(d)];
        for (int64_t f = 2; x.sym == 0 && f * 2 <= x.size; ++f) {
          if (x.size % f == 0) splits.emplace_back(d, f);
        }
      }
      if (splits.empty() || r >= 5) return false;
      auto [d, f] = g.choose(splits);
      const int64_t n = s.shape[static_cast<size_t>(d)].size;
      v.shape.erase(v.shape.begin() + d);
      v.shape.insert(v.shape.begin() + d, {Dim{f, 0}, Dim{n / f, 0}});
      view_form = fmt::format("{}.unflatten({}, [{}, {}])", s.name, d, f, n / f);
      break;
    }
    default: {  // drop a size-1 dim
      std::vector<int> ones;
      for (int d = 0; d < r; ++d) {
        if (s.shape[static_cast<size_t>(d)].sym == 0 && s.shape[static_cast<size_t>(d)].size == 1) ones.push_back(d);
      }
      if (ones.empty()) return false;
      int d = g.choose(ones);
      v.shape.erase(v.shape.begin() + d);
      view_form = fmt::format("{}.squeeze({})", s.name, d);
    }
  }
  auto list = sizes_list(v.shape);
  v.contiguous = s.contiguous;
  if (!view_form.empty() && (!list || g.chance(0.4))) return g.emit_view(view_form, v, "reshape", si) >= 0;
  if (!list) return false;
  if (s.contiguous && g.chance(0.5)) return g.emit_view(fmt::format("{}.view({})", s.name, *list), v, "view", si) >= 0;
  return g.emit_view(fmt::format("{}.reshape({})", s.name, *list), v, "reshape", si, /*ambiguous=*/true) >= 0;
}

// ---- in-place ---------------------------------------------------------------------------------

bool op_inplace(GeneratorState& g, int si) {
  const int ti = writable_target(g, si);
  if (ti < 0) return false;
  const Var t = var(g, ti);
  const bool fl = is_float(t.dtype);
  std::string e, label;
  double bound = t.bound;
  bool exact = t.exact;
  Dependence partner = Dependence::Elementwise;
  switch (g.pick(5)) {
    case 0: e = g.chance(0.7) ? t.name + ".relu_()" : "torch.relu_(" + t.name + ")"; label = "relu_"; break;
    case 1: {
      PartnerRequest rq;
      rq.fit_into = true;  // the result keeps the target's shape
      rq.int_only = !fl;
      rq.float_number = fl;
      rq.exclude_storage = t.storage;  // reading what is being written is an error in eager
      Operand y = g.partner(t, rq);
      if (y.var >= 0) partner = var(g, y.var).dependence;
      double alpha = 1;
      if (!y.number && g.chance(0.3)) {
        alpha = fl ? -0.5 : 2;
        e = fmt::format("{}.add_({}, alpha={})", t.name, y.text, fl ? float_literal(alpha) : "2");
      } else {
        e = fmt::format("{}.add_({})", t.name, y.text);
      }
      bound = t.bound + std::fabs(alpha) * y.bound;
      exact = !fl;
      label = "add_";
      break;
    }
    case 2: {
      PartnerRequest rq;
      rq.fit_into = true;
      rq.int_only = !fl;
      rq.allow_bool = true;
      rq.float_number = fl;
      rq.exclude_storage = t.storage;
      Operand y = g.partner(t, rq);
      if (y.var >= 0) partner = var(g, y.var).dependence;
      e = fmt::format("{}.mul_({})", t.name, y.text);
      bound = t.bound * (y.dtype == ST::Bool ? 1 : y.bound);
      exact = !fl || (t.exact && (y.dtype == ST::Bool || (y.number && power_of_two(y.bound))));
      label = "mul_";
      break;
    }
    case 3:
      if (!fl) return false;
      e = t.name + ".sigmoid_()";
      bound = 1;
      exact = false;
      label = "sigmoid_";
      break;
    default:
      e = fl ? t.name + ".clamp_(-1.0, 2.0)" : t.name + ".clamp_(-1, 2)";
      bound = 2;
      label = "clamp_";
  }
  if (!within_cap(t.dtype, bound)) return false;
  g.emit_mutation(e, ti, bound, exact, label, g.chance(0.5), partner);
  return true;
}

// An in-place op through a view of an intermediate (a slice, a transpose): the intermediate and
// every other view of it change.
bool op_inplace_view(GeneratorState& g, int si) {
  const int ti = writable_target(g, si);
  if (ti < 0) return false;
  const Var t = var(g, ti);
  const int r = static_cast<int>(t.shape.size());
  std::vector<int> dims;
  for (int d = 0; d < r; ++d) {
    if (t.shape[static_cast<size_t>(d)].sym == 0 && t.shape[static_cast<size_t>(d)].size >= 2) dims.push_back(d);
  }
  if (dims.empty()) return false;
  const int d = g.choose(dims);
  std::string view;
  switch (g.pick(4)) {
    case 0: view = fmt::format("{}.narrow({}, 0, 1)", t.name, d); break;
    case 1: view = fmt::format("{}.select({}, {})", t.name, d, t.shape[static_cast<size_t>(d)].size - 1); break;
    case 2: {
      view = t.name + "[";
      for (int i = 0; i < d; ++i) view += ":, ";
      view += "::2]";
      break;
    }
    default:
      if (r < 2) return false;
      view = fmt::format("{}.transpose(0, {})", t.name, r - 1);
  }
  const bool fl = is_float(t.dtype);
  std::string op;
  double bound = t.bound;
  bool exact = t.exact;
  switch (g.pick(4)) {
    case 0: op = ".relu_()"; break;
    case 1: op = fl ? ".mul_(2.0)" : ".mul_(2)"; bound = 2 * t.bound; break;
    case 2: op = fl ? ".add_(1.5)" : ".add_(1)"; bound = t.bound + 1.5; exact = exact && !fl; break;
    default: op = fl ? ".clamp_(-1.0, 1.0)" : ".clamp_(-1, 1)";
  }
  if (!within_cap(t.dtype, bound)) return false;
  g.emit_mutation(view + op, ti, bound, exact, "inplace_view", false);
  return true;
}

}  // namespace tcprof::fuzz
