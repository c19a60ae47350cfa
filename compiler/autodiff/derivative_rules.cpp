// The derivative-rule table. Each rule is written with ops the cpp backend fuses (mul, where,
// masked_fill, row sums) where it can, so the backward graph compiles to few kernels; LibTorch's
// own *_backward ops only where no fusible form exists. Formulas follow PyTorch's derivatives.yaml,
// in the same order of operations, so gradients round as eager's do.
#include "compiler/autodiff/derivative_rules.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/core/grad_mode.h>
#include <c10/util/accumulate.h>
#include <fmt/format.h>

namespace tcprof {
namespace {

double number(const c10::IValue& v) {
  if (v.isDouble()) return v.toDouble();
  if (v.isInt()) return static_cast<double>(v.toInt());
  if (v.isBool()) return v.toBool() ? 1.0 : 0.0;
  throw NoDerivative(fmt::format("a {} where a number was expected", v.tagKind()));
}

int64_t wrap_dim(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

// Whether LibTorch's clamp passes the gradient at x == lo and x == hi. It did up to 2.14 (inside
// [lo, hi]); 2.15 zeroes it there, as hardtanh does (inside (lo, hi)). Asked of the LibTorch this
// process runs, once, rather than keyed to a version.
bool clamp_passes_gradient_at_bounds() {
  static const bool passes = [] {
    at::AutoGradMode grad_mode(true);
    at::Tensor x = at::tensor({-1.0, 1.0}, at::kDouble).requires_grad_(true);
    at::clamp(x, c10::Scalar(-1.0), c10::Scalar(1.0)).sum().backward();
    return x.grad().sum().item<double>() != 0.0;
  }();
  return passes;
}

int64_t numel(const std::vector<int64_t>& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t{1}, std::multiplies<>());
}

std::vector<int64_t> int_list(const c10::IValue& v) {
  if (v.isInt()) return {v.toInt()};
  if (v.isIntList()) return v.toIntVector();
  if (v.isList()) {
    std::vector<int64_t> out;
    for (const auto& e : v.toListRef()) out.push_back(e.toInt());
    return out;
  }
  throw NoDerivative(fmt::format("a {} where a list of ints was expected", v.tagKind()));
}

// Gradient of a reduction over `dims` (all dims when empty) back to the input's shape.
Val expand_reduced(GradContext& c, Val g, std::vector<int64_t> dims, bool keepdim) {
  std::vector<int64_t> in = c.sizes(0);
  int64_t rank = static_cast<int64_t>(in.size());
  if (dims.empty()) {
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  }
  std::vector<int64_t> kept = in;
  for (int64_t d : dims) kept[static_cast<size_t>(wrap_dim(d, rank))] = 1;
  if (!keepdim && rank > 0) g = c.emit("aten::reshape", {g, kept});
  return c.emit("aten::expand", {g, in});
}

}  // namespace

Val GradContext::reduce_to(Val g, const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from == to) return g;
  if (to.size() > from.size()) return emit("aten::sum_to_size", {g, to});  // LibTorch says what is wrong
  const size_t lead = from.size() - to.size();
  std::vector<int64_t> dims, stretched;  // the leading dims, then the ones `to` has as 1
  for (size_t d = 0; d < lead; ++d) dims.push_back(static_cast<int64_t>(d));
  for (size_t d = lead; d < from.size(); ++d) {
    if (to[d - lead] == 1 && from[d] != 1) stretched.push_back(static_cast<int64_t>(d));
  }
  if (dims.empty() && stretched.empty()) return emit("aten::sum_to_size", {g, to});  // sizes that do not broadcast: LibTorch's error
  if (stretched.empty()) return emit("aten::sum", {g, dims, false});
  dims.insert(dims.end(), stretched.begin(), stretched.end());
  Val kept = emit("aten::sum", {g, dims, true});
  return lead == 0 ? kept : emit("aten::reshape", {kept, to});
}

namespace {

// Gradient of a binary pointwise op for argument i, summed to its shape.
void add_broadcast(GradContext& c, size_t i, Val g) { c.add(i, c.reduce_to(g, c.out_sizes(), c.sizes(i))); }

void add_sub(GradContext& c, double sign) {
  double alpha = c.has_arg(2) ? number(c.value(2)) : 1.0;
  if (c.needs(0)) add_broadcast(c, 0, c.grad());
  if (c.needs(1)) add_broadcast(c, 1, sign * alpha == 1.0 ? c.grad() : c.emit("aten::mul", {c.grad(), sign * alpha}));
}

void mul(GradContext& c) {
  if (c.needs(0)) add_broadcast(c, 0, c.emit("aten::mul", {c.grad(), c.arg(1)}));
  if (c.needs(1)) add_broadcast(c, 1, c.emit("aten::mul", {c.grad(), c.arg(0)}));
}

void div(GradContext& c) {
  if (c.has_arg(2)) throw NoDerivative("division with a rounding mode");
  if (c.needs(0)) add_broadcast(c, 0, c.emit("aten::div", {c.grad(), c.arg(1)}));
  if (c.needs(1)) {  // -g * a / b^2, as -g * out / b
    Val q = c.emit("aten::div", {c.emit("aten::mul", {c.grad(), c.out()}), c.arg(1)});
    add_broadcast(c, 1, c.emit("aten::neg", {q}));
  }
}

// Matrix products: the gradient of a @ b is g @ b^T and a^T @ g, summed over broadcast batches.
void matmul(GradContext& c) {
  if (c.tensor(0).dim() < 2 || c.tensor(1).dim() < 2) throw NoDerivative("matmul of a vector");
  std::vector<int64_t> a = c.sizes(0), b = c.sizes(1);
  if (c.needs(0)) {  // g [..., m, n] @ b^T [..., n, k]
    Val ga = c.emit("aten::matmul", {c.grad(), c.emit("aten::transpose", {c.arg(1), -1, -2})});
    std::vector<int64_t> shape = c.out_sizes();
    shape.back() = a.back();
    c.add(0, c.reduce_to(ga, shape, a));
  }
  if (c.needs(1)) {
    if (b.size() == 2 && a.size() > 2) {  // a batch against one matrix: one GEMM over the flattened rows
      Val a2 = c.emit("aten::reshape", {c.arg(0), std::vector<int64_t>{-1, a.back()}});
      Val g2 = c.emit("aten::reshape", {c.grad(), std::vector<int64_t>{-1, b.back()}});
      c.add(1, c.emit("aten::mm", {c.emit("aten::t", {a2}), g2}));
    } else {
      Val gb = c.emit("aten::matmul", {c.emit("aten::transpose", {c.arg(0), -1, -2}), c.grad()});
      std::vector<int64_t> shape = c.out_sizes();  // a^T [..., k, m] @ g [..., m, n]
      shape[shape.size() - 2] = b[b.size() - 2];
      c.add(1, c.reduce_to(gb, shape, b));
    }
  }
}

void mm(GradContext& c, const char* product, int64_t d0, int64_t d1) {
  if (c.needs(0)) c.add(0, c.emit(product, {c.grad(), c.emit("aten::transpose", {c.arg(1), d0, d1})}));
  if (c.needs(1)) c.add(1, c.emit(product, {c.emit("aten::transpose", {c.arg(0), d0, d1}), c.grad()}));
}

void linear(GradContext& c) {
  std::vector<int64_t> x = c.sizes(0), w = c.sizes(1);
  if (x.size() < 1 || w.size() != 2) throw NoDerivative("linear of a vector weight");
  // The bias's sum first: before the products read g, it can join the kernel that computes g.
  if (c.has_arg(2) && c.needs(2)) c.add(2, c.reduce_to(c.grad(), c.out_sizes(), {w[0]}));
  if (c.needs(0)) c.add(0, c.emit("aten::matmul", {c.grad(), c.arg(1)}));
  if (!c.needs(1)) return;
  Val g2 = c.emit("aten::reshape", {c.grad(), std::vector<int64_t>{-1, w[0]}});
  Val x2 = c.emit("aten::reshape", {c.arg(0), std::vector<int64_t>{-1, w[1]}});
  c.add(1, c.emit("aten::mm", {c.emit("aten::t", {g2}), x2}));
}

void addmm(GradContext& c) {
  if (number(c.value(3)) != 1.0 || number(c.value(4)) != 1.0) throw NoDerivative("addmm with beta or alpha other than 1");
  if (c.needs(0)) c.add(0, c.reduce_to(c.grad(), c.out_sizes(), c.sizes(0)));
  if (c.needs(1)) c.add(1, c.emit("aten::mm", {c.grad(), c.emit("aten::t", {c.arg(2)})}));
  if (c.needs(2)) c.add(2, c.emit("aten::mm", {c.emit("aten::t", {c.arg(1)}), c.grad()}));
}

// out = softmax(x): g_x = out * (g - sum(g * out)).
void softmax(GradContext& c) {
  if (c.has_arg(2)) throw NoDerivative("softmax with a dtype");
  int64_t dim = c.value(1).toInt();
  Val dot = c.emit("aten::sum", {c.emit("aten::mul", {c.grad(), c.out()}), std::vector<int64_t>{dim}, true});
  c.add(0, c.emit("aten::mul", {c.out(), c.emit("aten::sub", {c.grad(), dot})}));
}

// out = log_softmax(x): g_x = g - exp(out) * sum(g).
void log_softmax(GradContext& c) {
  if (c.has_arg(2)) throw NoDerivative("log_softmax with a dtype");
  int64_t dim = c.value(1).toInt();
  Val total = c.emit("aten::sum", {c.grad(), std::vector<int64_t>{dim}, true});
  c.add(0, c.emit("aten::sub", {c.grad(), c.emit("aten::mul", {c.emit("aten::exp", {c.out()}), total})}));
}

// Layer norm's statistics are recomputed from the saved input (two row reductions the backward's
// kernels fuse) instead of being saved: g_x = rstd * (g_xhat - mean(g_xhat) - xhat * mean(g_xhat * xhat)).
void layer_norm(GradContext& c) {
  size_t k = int_list(c.value(1)).size();
  int64_t rank = c.tensor(0).dim();
  std::vector<int64_t> dims;
  for (int64_t d = rank - static_cast<int64_t>(k); d < rank; ++d) dims.push_back(d);
  auto mean = [&](const BuildArg& v) { return c.emit("aten::mean", {v, dims, true}); };
  Val xc = c.emit("aten::sub", {c.arg(0), mean(c.arg(0))});
  Val var = mean(c.emit("aten::mul", {xc, xc}));
  Val rstd = c.emit("aten::rsqrt", {c.emit("aten::add", {var, number(c.value(4))})});
  Val xhat = c.emit("aten::mul", {xc, rstd});
  bool weight = c.has_arg(2), bias = c.has_arg(3);
  if (c.needs(0)) {
    Val gxhat = weight ? c.emit("aten::mul", {c.grad(), c.arg(2)}) : c.grad();
    Val a = mean(gxhat);
    Val b = mean(c.emit("aten::mul", {gxhat, xhat}));
    Val inner = c.emit("aten::sub", {c.emit("aten::sub", {gxhat, a}), c.emit("aten::mul", {xhat, b})});
    c.add(0, c.emit("aten::mul", {rstd, inner}));
  }
  if (weight && c.needs(2)) c.add(2, c.reduce_to(c.emit("aten::mul", {c.grad(), xhat}), c.out_sizes(), c.sizes(2)));
  if (bias && c.needs(3)) c.add(3, c.reduce_to(c.grad(), c.out_sizes(), c.sizes(3)));
}

// Losses a model computes inside forward (class indices over [N, C] logits, no class weights, no
// label smoothing). Reduction: 0 none (g is per row), 1 mean over the rows not ignored, 2 sum.
// `log_probs` false: the input is logits (cross_entropy), true: log-probabilities (nll_loss).
void classification_loss(GradContext& c, bool log_probs) {
  const size_t reduction_arg = 3, ignore_arg = 4;  // the same positions in both schemas
  if (c.tensor(0).dim() != 2) throw NoDerivative("a loss over other than [N, C] inputs");
  if (c.has_arg(2)) throw NoDerivative("a loss with class weights");
  if (!log_probs && c.has_arg(5) && number(c.value(5)) != 0.0) throw NoDerivative("label smoothing");
  if (!c.needs(0)) return;
  const int64_t reduction = c.value(reduction_arg).toInt(), classes = c.sizes(0)[1];
  const int64_t ignore = c.value(ignore_arg).toInt();
  Val valid = c.emit("aten::ne", {c.arg(1), ignore});
  Val safe = c.emit("aten::where", {valid, c.arg(1), c.emit("aten::zeros_like", {c.arg(1)})});
  Val onehot = c.emit("aten::one_hot", {safe, classes});
  // d loss_row / d x = softmax(x) - onehot (logits), or -onehot (log-probabilities).
  Val row_grad = log_probs ? c.emit("aten::neg", {onehot})
                           : c.emit("aten::sub", {c.emit("aten::softmax", {c.arg(0), int64_t{1}}), onehot});
  Val scale = c.emit("aten::where", {valid, c.grad(), 0.0});  // per row: g, 0 where ignored
  if (reduction == 1) scale = c.emit("aten::div", {scale, c.emit("aten::sum", {valid})});
  c.add(0, c.emit("aten::mul", {row_grad, c.emit("aten::unsqueeze", {scale, int64_t{1}})}));
}

// mse_loss(x, y): 2 (x - y) g, over the element count for mean.
void mse_loss(GradContext& c) {
  const int64_t reduction = c.has_arg(2) ? c.value(2).toInt() : 1;
  const std::vector<int64_t> shape = at::infer_size(c.sizes(0), c.sizes(1));  // x and y broadcast
  Val diff = c.emit("aten::mul", {c.emit("aten::sub", {c.arg(0), c.arg(1)}), 2.0});
  Val g = c.grad();
  if (reduction == 1) g = c.emit("aten::div", {g, static_cast<double>(c10::multiply_integers(shape))});
  Val gx = c.emit("aten::mul", {diff, g});
  if (c.needs(0)) c.add(0, c.reduce_to(gx, shape, c.sizes(0)));
  if (c.needs(1)) c.add(1, c.reduce_to(c.emit("aten::neg", {gx}), shape, c.sizes(1)));
}

void sum_mean(GradContext& c, bool mean) {
  Val g = c.grad();
  std::vector<int64_t> dims;
  bool keepdim = false;
  if (c.op().args.size() >= 3 && !c.value(1).isNone() && !c.value(1).isScalar()) {  // sum.dim_IntList
    dims = int_list(c.value(1));
    keepdim = c.value(2).toBool();
  }
  std::vector<int64_t> in = c.sizes(0);
  if (mean) {
    int64_t count = numel(in) / std::max<int64_t>(1, numel(c.out_sizes()));
    g = c.emit("aten::div", {g, static_cast<double>(count)});
  }
  c.add(0, expand_reduced(c, g, dims, keepdim));
}

void view_like(GradContext& c) { c.add(0, c.emit("aten::reshape", {c.grad(), c.sizes(0)})); }

void permute(GradContext& c) {
  std::vector<int64_t> dims = int_list(c.value(1));
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[static_cast<size_t>(wrap_dim(dims[i], static_cast<int64_t>(dims.size())))] = static_cast<int64_t>(i);
  c.add(0, c.emit("aten::permute", {c.grad(), inverse}));
}

void slice(GradContext& c) {
  std::vector<int64_t> in = c.sizes(0);
  int64_t dim = wrap_dim(c.value(1).toInt(), static_cast<int64_t>(in.size()));
  int64_t size = in[static_cast<size_t>(dim)];
  auto clamp = [&](const c10::IValue& v, int64_t none) {
    int64_t x = v.isNone() ? none : v.toInt();
    if (x < 0) x += size;
    return std::min(std::max<int64_t>(x, 0), size);
  };
  int64_t start = clamp(c.value(2), 0), end = clamp(c.value(3), size), step = c.value(4).toInt();
  c.add(0, c.emit("aten::slice_backward", {c.grad(), in, dim, start, std::max(start, end), step}));
}

// Ops returning a list (split, chunk): the item gradients concatenated, zeros for unused items.
void split(GradContext& c, int64_t dim) {
  std::vector<Val> items = c.item_grads();
  const auto& outs = c.out_value().toListRef();
  Val any{-1};
  for (Val v : items) any = v.slot >= 0 ? v : any;
  if (any.slot < 0) return;
  std::vector<Val> parts;
  for (size_t i = 0; i < items.size(); ++i) {
    parts.push_back(items[i].slot >= 0 ? items[i] : c.emit("aten::new_zeros", {any, outs[i].toTensor().sizes().vec()}));
  }
  c.add(0, c.emit("aten::cat", {parts, dim}));
}

// broadcast_tensors (F.mse_loss calls it): each input's gradient is its output's, summed back to
// the input's shape.
void broadcast_tensors(GradContext& c) {
  std::vector<Val> items = c.item_grads();
  const auto& ins = c.value(0).toListRef();
  std::vector<Val> grads;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::vector<int64_t> in = ins[i].toTensor().sizes().vec();
    grads.push_back(items[i].slot < 0 ? items[i] : c.reduce_to(items[i], c.out_value().toListRef()[i].toTensor().sizes().vec(), in));
  }
  c.add_items(0, grads);
}

void cat(GradContext& c) {
  int64_t dim = c.value(1).toInt();
  std::vector<Val> grads;
  int64_t offset = 0;
  for (const auto& item : c.value(0).toListRef()) {
    const at::Tensor& t = item.toTensor();
    int64_t rank = t.dim();
    if (rank == 1 && t.size(0) == 0) {  // cat skips empty 1-d tensors
      grads.push_back({-1});
      continue;
    }
    int64_t d = wrap_dim(dim, rank), n = t.size(d);
    grads.push_back(c.emit("aten::slice", {c.grad(), d, offset, offset + n, 1}));
    offset += n;
  }
  c.add_items(0, grads);
}

// Pointwise ops in terms of their output y or input x.
void unary(GradContext& c, const std::string& name) {
  Val g = c.grad(), y = c.out();
  auto e = [&](const char* op, std::vector<BuildArg> args) { return c.emit(op, std::move(args)); };
  Val gx;
  if (name == "aten::relu") gx = e("aten::masked_fill", {g, e("aten::le", {y, 0.0}), 0.0});
  else if (name == "aten::neg") gx = e("aten::neg", {g});
  else if (name == "aten::exp") gx = e("aten::mul", {g, y});
  else if (name == "aten::log") gx = e("aten::div", {g, c.arg(0)});
  else if (name == "aten::sqrt") gx = e("aten::div", {g, e("aten::mul", {y, 2.0})});
  else if (name == "aten::rsqrt") gx = e("aten::mul", {g, e("aten::mul", {e("aten::pow", {y, 3.0}), -0.5})});
  else if (name == "aten::reciprocal") gx = e("aten::mul", {g, e("aten::neg", {e("aten::mul", {y, y})})});
  else if (name == "aten::tanh") gx = e("aten::mul", {g, e("aten::rsub", {e("aten::mul", {y, y}), 1.0})});
  else if (name == "aten::sigmoid") gx = e("aten::mul", {e("aten::mul", {g, e("aten::rsub", {y, 1.0})}), y});
  else if (name == "aten::silu") {  // g * s * (1 + x * (1 - s))
    Val s = e("aten::sigmoid", {c.arg(0)});
    Val inner = e("aten::add", {e("aten::mul", {c.arg(0), e("aten::rsub", {s, 1.0})}), 1.0});
    gx = e("aten::mul", {e("aten::mul", {g, s}), inner});
  } else if (name == "aten::gelu") {
    // g * (Phi(x) + x * phi(x)), or the tanh form's derivative: one op the backends lower (the cpp
    // backend shares one exp between Phi and phi), LibTorch's where a backend does not.
    gx = e("aten::gelu_backward", {g, c.arg(0), kw("approximate", c.has_arg(1) ? c.arg(1) : BuildArg("none"))});
  } else if (name == "aten::pow") {
    if (!c.value(1).isScalar()) throw NoDerivative("pow with a tensor exponent");
    double p = number(c.value(1));
    gx = p == 0.0 ? e("aten::mul", {g, 0.0}) : e("aten::mul", {g, e("aten::mul", {e("aten::pow", {c.arg(0), p - 1.0}), p})});
  } else if (name == "aten::relu6" || name == "aten::hardtanh") {
    // Zero where x <= lo or x >= hi (LibTorch's hardtanh_backward): a NaN x passes g through.
    double lo = name == "aten::relu6" ? 0.0 : c.has_arg(1) ? number(c.value(1)) : -1.0;
    double hi = name == "aten::relu6" ? 6.0 : c.has_arg(2) ? number(c.value(2)) : 1.0;
    gx = e("aten::where", {e("aten::le", {c.arg(0), lo}), 0.0, e("aten::where", {e("aten::ge", {c.arg(0), hi}), 0.0, g})});
  } else if (name == "aten::clamp" || name == "aten::clamp_min" || name == "aten::clamp_max") {
    // Inside [lo, hi], or (lo, hi) where this LibTorch says so.
    bool has_lo = name != "aten::clamp_max" && c.has_arg(1);
    size_t hi_arg = name == "aten::clamp" ? 2 : 1;
    bool has_hi = name != "aten::clamp_min" && c.has_arg(hi_arg);
    if ((has_lo && !c.value(1).isScalar()) || (has_hi && !c.value(hi_arg).isScalar())) {
      throw NoDerivative("clamp with tensor bounds");
    }
    const bool at_bounds = clamp_passes_gradient_at_bounds();
    gx = g;
    if (has_hi) gx = e("aten::where", {e(at_bounds ? "aten::le" : "aten::lt", {c.arg(0), number(c.value(hi_arg))}), gx, 0.0});
    if (has_lo) gx = e("aten::where", {e(at_bounds ? "aten::ge" : "aten::gt", {c.arg(0), number(c.value(1))}), gx, 0.0});
  } else if (name == "aten::hardswish") gx = e("aten::hardswish_backward", {g, c.arg(0)});
  else if (name == "aten::hardsigmoid") gx = e("aten::hardsigmoid_backward", {g, c.arg(0)});
  else if (name == "aten::sin") gx = e("aten::mul", {g, e("aten::cos", {c.arg(0)})});
  else if (name == "aten::cos") gx = e("aten::mul", {g, e("aten::neg", {e("aten::sin", {c.arg(0)})})});
  else if (name == "aten::erf") {  // 2/sqrt(pi) * exp(-x^2) * g
    Val x{c.arg(0).slot};
    gx = e("aten::mul", {e("aten::mul", {e("aten::exp", {e("aten::neg", {e("aten::mul", {x, x})})}), M_2_SQRTPI}), g});
  } else if (name == "aten::abs") {  // g * sign(x), as LibTorch: sign is 0 at 0 and at NaN, and inf * 0 is NaN
    Val x{c.arg(0).slot};
    Val sign = e("aten::where", {e("aten::gt", {x, 0.0}), 1.0, e("aten::where", {e("aten::lt", {x, 0.0}), -1.0, 0.0})});
    gx = e("aten::mul", {g, sign});
  } else if (name == "aten::ceil" || name == "aten::floor" || name == "aten::round" || name == "aten::trunc") {
    gx = e("aten::zeros_like", {g});
  }
  else throw NoDerivative("no pointwise rule");
  c.add(0, gx);
}

// Batch norm in eval mode (running statistics, constants here) is an affine map per channel:
// y = (x - mean) * rsqrt(var + eps) * w + b.
void batch_norm(GradContext& c) {
  if (c.value(5).toBool()) throw NoDerivative("batch norm in training mode (it updates the running statistics)");
  if (c.needs(3) || c.needs(4)) throw NoDerivative("batch norm with running statistics that require grad");
  int64_t rank = c.tensor(0).dim();
  std::vector<int64_t> channel(static_cast<size_t>(rank), 1), dims{0};
  channel[1] = c.tensor(0).size(1);
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  auto per_channel = [&](size_t i) { return c.emit("aten::reshape", {c.arg(i), channel}); };
  Val scale = c.emit("aten::rsqrt", {c.emit("aten::add", {per_channel(4), number(c.value(7))})});
  bool weight = c.has_arg(1);
  if (c.needs(0)) c.add(0, c.emit("aten::mul", {c.grad(), weight ? c.emit("aten::mul", {scale, per_channel(1)}) : scale}));
  if (weight && c.needs(1)) {
    Val xhat = c.emit("aten::mul", {c.emit("aten::sub", {c.arg(0), per_channel(3)}), scale});
    c.add(1, c.emit("aten::sum", {c.emit("aten::mul", {c.grad(), xhat}), dims, false}));
  }
  if (c.has_arg(2) && c.needs(2)) c.add(2, c.emit("aten::sum", {c.grad(), dims, false}));
}

std::map<std::string, DerivativeRule> make_table() {
  std::map<std::string, DerivativeRule> m;
  for (const char* n : {"aten::relu", "aten::neg", "aten::exp", "aten::log", "aten::sqrt", "aten::rsqrt",
                        "aten::reciprocal", "aten::tanh", "aten::sigmoid", "aten::silu", "aten::gelu", "aten::pow",
                        "aten::relu6", "aten::hardtanh", "aten::clamp", "aten::clamp_min", "aten::clamp_max",
                        "aten::hardswish", "aten::hardsigmoid", "aten::sin", "aten::cos", "aten::erf", "aten::abs",
                        "aten::ceil", "aten::floor", "aten::round", "aten::trunc"}) {
    std::string name = n;
    m[name] = [name](GradContext& c) { unary(c, name); };
  }
  m["aten::add"] = [](GradContext& c) { add_sub(c, 1.0); };
  m["aten::sub"] = [](GradContext& c) { add_sub(c, -1.0); };
  m["aten::rsub"] = [](GradContext& c) {  // other - alpha * self
    double alpha = c.has_arg(2) ? number(c.value(2)) : 1.0;
    if (c.needs(0)) add_broadcast(c, 0, c.emit("aten::mul", {c.grad(), -alpha}));
    if (c.needs(1)) add_broadcast(c, 1, c.grad());
  };
  // maximum/minimum: the gradient goes to the larger (smaller) argument, split evenly on ties.
  for (const char* n : {"aten::maximum", "aten::minimum"}) {
    bool max = std::string(n) == "aten::maximum";
    m[n] = [max](GradContext& c) {
      Val half = c.emit("aten::where", {c.emit("aten::eq", {c.arg(0), c.arg(1)}), c.emit("aten::div", {c.grad(), 2.0}), c.grad()});
      if (c.needs(0)) add_broadcast(c, 0, c.emit("aten::masked_fill", {half, c.emit(max ? "aten::lt" : "aten::gt", {c.arg(0), c.arg(1)}), 0.0}));
      if (c.needs(1)) add_broadcast(c, 1, c.emit("aten::masked_fill", {half, c.emit(max ? "aten::gt" : "aten::lt", {c.arg(0), c.arg(1)}), 0.0}));
    };
  }
  m["aten::mul"] = mul;
  m["aten::div"] = div;
  m["aten::matmul"] = matmul;
  m["aten::mm"] = [](GradContext& c) { mm(c, "aten::mm", 0, 1); };
  m["aten::bmm"] = [](GradContext& c) { mm(c, "aten::bmm", 1, 2); };
  m["aten::linear"] = linear;
  m["aten::addmm"] = addmm;
  m["aten::softmax"] = softmax;
  m["aten::log_softmax"] = log_softmax;
  m["aten::cross_entropy_loss"] = [](GradContext& c) { classification_loss(c, false); };
  m["aten::nll_loss"] = [](GradContext& c) { classification_loss(c, true); };
  m["aten::nll_loss_nd"] = m["aten::nll_loss"];  // F.nll_loss's entry point; [N, C] inputs only here
  m["aten::broadcast_tensors"] = broadcast_tensors;
  m["aten::mse_loss"] = mse_loss;
  m["aten::layer_norm"] = layer_norm;
  m["aten::batch_norm"] = batch_norm;
  m["aten::sum"] = [](GradContext& c) { sum_mean(c, false); };
  m["aten::mean"] = [](GradContext& c) { sum_mean(c, true); };
  for (const char* n : {"aten::view", "aten::reshape", "aten::flatten", "aten::unsqueeze", "aten::squeeze",
                        "aten::view_as", "aten::reshape_as", "aten::unflatten"}) {
    m[n] = view_like;
  }
  for (const char* n : {"aten::contiguous", "aten::clone"}) m[n] = [](GradContext& c) { c.add(0, c.grad()); };
  m["aten::dropout"] = [](GradContext& c) {
    if (c.value(2).toBool() && number(c.value(1)) != 0.0) {
      throw NoDerivative("dropout in training mode (its random mask is not part of the graph)");
    }
    c.add(0, c.grad());
  };
  m["aten::transpose"] = [](GradContext& c) { c.add(0, c.emit("aten::transpose", {c.grad(), c.arg(1), c.arg(2)})); };
  m["aten::t"] = [](GradContext& c) { c.add(0, c.emit("aten::t", {c.grad()})); };
  m["aten::permute"] = permute;
  m["aten::expand"] = [](GradContext& c) { c.add(0, c.reduce_to(c.grad(), c.out_sizes(), c.sizes(0))); };
  m["aten::expand_as"] = m["aten::expand"];
  m["aten::select"] = [](GradContext& c) {
    c.add(0, c.emit("aten::select_backward", {c.grad(), c.sizes(0), c.arg(1), c.arg(2)}));
  };
  m["aten::slice"] = slice;
  m["aten::narrow"] = [](GradContext& c) {
    std::vector<int64_t> in = c.sizes(0);
    int64_t dim = wrap_dim(c.value(1).toInt(), static_cast<int64_t>(in.size()));
    int64_t start = c.value(2).toInt();
    if (start < 0) start += in[static_cast<size_t>(dim)];
    c.add(0, c.emit("aten::slice_backward", {c.grad(), in, dim, start, start + c.value(3).toInt(), 1}));
  };
  m["aten::split"] = [](GradContext& c) { split(c, c.has_arg(2) ? c.value(2).toInt() : 0); };
  m["aten::split_with_sizes"] = m["aten::split"];
  m["aten::cat"] = cat;
  m["prim::ListUnpack"] = [](GradContext& c) {
    std::vector<Val> grads;
    for (size_t i = 0; i < c.op().outputs.size(); ++i) grads.push_back(c.grad(i));
    c.add_items(0, grads);
  };
  m["aten::masked_fill"] = [](GradContext& c) {
    if (c.needs(2)) throw NoDerivative("masked_fill with a tensor value that requires grad");
    if (c.needs(0)) add_broadcast(c, 0, c.emit("aten::masked_fill", {c.grad(), c.arg(1), 0.0}));
  };
  m["aten::where"] = [](GradContext& c) {
    if (c.needs(1)) add_broadcast(c, 1, c.emit("aten::where", {c.arg(0), c.grad(), 0.0}));
    if (c.needs(2)) add_broadcast(c, 2, c.emit("aten::where", {c.arg(0), 0.0, c.grad()}));
  };
  m["aten::embedding"] = [](GradContext& c) {
    if (c.value(4).toBool()) throw NoDerivative("sparse embedding gradients");
    c.add(0, c.emit("aten::embedding_dense_backward",
                    {c.grad(), c.arg(1), c.tensor(0).size(0), c.arg(2), c.arg(3)}));
  };
  m["aten::conv2d"] = [](GradContext& c) {
    if (c.value(4).isString()) throw NoDerivative("convolution with string padding");
    bool bias = c.has_arg(2);
    c10::IValue bias_sizes = bias ? c10::IValue(c.sizes(2)) : c10::IValue();
    std::vector<bool> mask{c.needs(0), c.needs(1), bias && c.needs(2)};
    c10::List<bool> output_mask;
    for (bool m : mask) output_mask.push_back(m);
    std::vector<Val> g = c.emit_all("aten::convolution_backward",
                                    {c.grad(), c.arg(0), c.arg(1), bias_sizes, c.arg(3), c.arg(4), c.arg(5), false,
                                     std::vector<int64_t>{0, 0}, c.arg(6), c10::IValue(output_mask)});
    for (size_t i = 0; i < 3; ++i) {
      if (mask[i]) c.add(i, g[i]);
    }
  };
  m["aten::adaptive_avg_pool2d"] = [](GradContext& c) {
    std::vector<int64_t> in = c.sizes(0);
    if (int_list(c.value(1)) == std::vector<int64_t>{1, 1}) {  // global average: spread g evenly
      double area = static_cast<double>(in[in.size() - 1] * in[in.size() - 2]);
      c.add(0, c.emit("aten::expand", {c.emit("aten::div", {c.grad(), area}), in}));
    } else {
      c.add(0, c.emit("aten::_adaptive_avg_pool2d_backward", {c.grad(), c.arg(0)}));
    }
  };
  m["aten::max_pool2d"] = [](GradContext& c) {  // the indices are recomputed from the saved input
    std::vector<Val> pooled = c.emit_all("aten::max_pool2d_with_indices",
                                         {c.arg(0), c.arg(1), c.arg(2), c.arg(3), c.arg(4), c.arg(5)});
    c.add(0, c.emit("aten::max_pool2d_with_indices_backward",
                    {c.grad(), c.arg(0), c.arg(1), c.arg(2), c.arg(3), c.arg(4), c.arg(5), pooled[1]}));
  };
  return m;
}

const std::map<std::string, DerivativeRule>& table() {
  static const std::map<std::string, DerivativeRule> t = make_table();
  return t;
}

}  // namespace

const DerivativeRule* derivative_rule(const std::string& op_name) {
  auto it = table().find(op_name);
  return it == table().end() ? nullptr : &it->second;
}

bool is_non_differentiable(const std::string& op_name) {
  static const std::vector<std::string> names = {
      "aten::detach", "aten::zeros_like", "aten::ones_like", "aten::empty_like", "aten::full_like", "aten::rand_like",
      "aten::randn_like", "aten::new_zeros", "aten::new_ones", "aten::new_empty", "aten::new_full", "aten::bernoulli",
      "aten::size", "aten::dim", "aten::numel", "aten::argmax", "aten::argmin", "prim::dtype", "prim::device"};
  return std::find(names.begin(), names.end(), op_name) != names.end();
}

std::vector<std::string> differentiable_ops() {
  std::vector<std::string> out;
  for (const auto& [name, rule] : table()) out.push_back(name);
  return out;
}

}  // namespace tcprof
