#include "compiler/backends/cpp/lower/lower_ops.h"

#include <cmath>
#include <optional>
#include <set>
#include <unordered_map>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "compiler/backends/backend.h"
#include "compiler/backends/cpp/passes/graph_passes.h"

namespace tcprof {

bool to_elem_type(c10::ScalarType t, ElemType* out) {
  switch (t) {
    case c10::ScalarType::Float: *out = ElemType::F32; return true;
    case c10::ScalarType::Double: *out = ElemType::F64; return true;
    case c10::ScalarType::Long: *out = ElemType::I64; return true;
    case c10::ScalarType::Int: *out = ElemType::I32; return true;
    case c10::ScalarType::Bool: *out = ElemType::Bool; return true;
    case c10::ScalarType::BFloat16: *out = ElemType::BF16; return true;
    case c10::ScalarType::Half: *out = ElemType::F16; return true;
    default: return false;
  }
}

bool is_extern_by_design(const std::string& name) {
  // Views cost nothing in LibTorch; compute-bound ops are BLAS's and oneDNN's job.
  static const std::set<std::string> compute_bound = {
      "aten::linear", "aten::matmul", "aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm",
      "aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::_convolution", "aten::convolution",
      "aten::convolution_backward",
      "aten::embedding", "aten::scaled_dot_product_attention", "aten::einsum", "tcprof::linear_activation",
      "tcprof::conv_relu"};
  return is_view_op(name) || compute_bound.count(name) > 0;
}

namespace {

using Kind = OpLowering::Kind;

struct Emitter {
  const GraphOp& op;
  const LowerContext& ctx;
  KernelBuilder& kb;
  const EmitCallbacks& cb;
  ElemType out;

  bool is_tensor(size_t i) const { return i < op.args.size() && ctx.arg(op, i).isTensor(); }
  double scalar(size_t i) const {
    c10::IValue v = ctx.arg(op, i);
    if (v.isDouble()) return v.toDouble();
    if (v.isInt()) return static_cast<double>(v.toInt());
    if (v.isBool()) return v.toBool() ? 1.0 : 0.0;
    return 0;
  }
  // Argument i as a node of type t: a tensor read, or the scalar as a constant.
  int operand(size_t i, ElemType t) const {
    if (is_tensor(i)) return kb.cast(cb.tensor_arg(i), t);
    return kb.constant(scalar(i), t);
  }
  int c(double v) const { return kb.constant(v, out); }
  int bin(ExprOp o, int a, int b) const { return kb.binary(o, out, a, b); }
  int un(ExprOp o, int a) const { return kb.unary(o, out, a); }
  int clamp(int x, std::optional<double> lo, std::optional<double> hi) const {
    // NaN passes through, as in LibTorch's clamp: both comparisons are false for NaN.
    if (hi) x = kb.where(out, kb.binary(ExprOp::Gt, ElemType::Bool, x, c(*hi)), c(*hi), x);
    if (lo) x = kb.where(out, kb.binary(ExprOp::Lt, ElemType::Bool, x, c(*lo)), c(*lo), x);
    return x;
  }
  std::optional<double> optional_scalar(size_t i) const {
    if (i >= op.args.size()) return std::nullopt;
    c10::IValue v = ctx.arg(op, i);
    if (v.isNone()) return std::nullopt;
    return scalar(i);
  }
  ElemType promoted(size_t a, size_t b) const {
    c10::IValue x = ctx.arg(op, a), y = ctx.arg(op, b);
    c10::ScalarType t;
    if (x.isTensor() && y.isTensor()) t = at::result_type(x.toTensor(), y.toTensor());
    else if (x.isTensor()) t = at::result_type(x.toTensor(), y.toScalar());
    else t = at::result_type(y.toTensor(), x.toScalar());
    ElemType e = ElemType::F32;
    to_elem_type(t, &e);
    return e;
  }
};

using EmitFn = int (*)(const Emitter&);

// x + alpha * y with alpha != 1 as eager's add kernel computes it: one fused multiply-add for
// floating types (vec::fmadd), so that x.add(x, alpha=-1.5) is exactly -0.5 x as in eager (fuzz
// case 239495668336614); sub and rsub are add with -alpha, as in ATen.
int add_scaled(const Emitter& e, int x, int y, double alpha) {
  if (alpha == 1.0) return e.bin(ExprOp::Add, x, y);
  if (is_floating(e.out)) return e.kb.fma(e.out, y, e.c(alpha), x);
  return e.bin(ExprOp::Add, x, e.bin(ExprOp::Mul, y, e.c(alpha)));
}
double alpha_of(const Emitter& e) { return e.op.args.size() > 2 ? e.scalar(2) : 1.0; }
int emit_add(const Emitter& e) { return add_scaled(e, e.operand(0, e.out), e.operand(1, e.out), alpha_of(e)); }
int emit_sub(const Emitter& e) {
  if (alpha_of(e) == 1.0) return e.bin(ExprOp::Sub, e.operand(0, e.out), e.operand(1, e.out));
  return add_scaled(e, e.operand(0, e.out), e.operand(1, e.out), -alpha_of(e));
}
int emit_rsub(const Emitter& e) {
  if (alpha_of(e) == 1.0) return e.bin(ExprOp::Sub, e.operand(1, e.out), e.operand(0, e.out));
  return add_scaled(e, e.operand(1, e.out), e.operand(0, e.out), -alpha_of(e));
}
int emit_mul(const Emitter& e) { return e.bin(ExprOp::Mul, e.operand(0, e.out), e.operand(1, e.out)); }
int emit_div(const Emitter& e) { return e.bin(ExprOp::Div, e.operand(0, e.out), e.operand(1, e.out)); }
int emit_max(const Emitter& e) { return e.bin(ExprOp::Max, e.operand(0, e.out), e.operand(1, e.out)); }
int emit_min(const Emitter& e) { return e.bin(ExprOp::Min, e.operand(0, e.out), e.operand(1, e.out)); }

template <ExprOp O>
int emit_compare(const Emitter& e) {
  ElemType t = e.promoted(0, 1);
  return e.kb.binary(O, ElemType::Bool, e.operand(0, t), e.operand(1, t));
}
template <ExprOp O>
int emit_unary(const Emitter& e) { return e.un(O, e.operand(0, e.out)); }

int emit_identity(const Emitter& e) { return e.operand(0, e.out); }
int emit_relu(const Emitter& e) { return e.clamp(e.operand(0, e.out), 0.0, std::nullopt); }
int emit_relu6(const Emitter& e) { return e.clamp(e.operand(0, e.out), 0.0, 6.0); }
int emit_hardtanh(const Emitter& e) {
  return e.clamp(e.operand(0, e.out), e.optional_scalar(1).value_or(-1.0), e.optional_scalar(2).value_or(1.0));
}
int emit_clamp(const Emitter& e) { return e.clamp(e.operand(0, e.out), e.optional_scalar(1), e.optional_scalar(2)); }
int emit_clamp_min(const Emitter& e) { return e.clamp(e.operand(0, e.out), e.scalar(1), std::nullopt); }
int emit_clamp_max(const Emitter& e) { return e.clamp(e.operand(0, e.out), std::nullopt, e.scalar(1)); }
int emit_hardsigmoid(const Emitter& e) {
  int x = e.operand(0, e.out);
  return e.bin(ExprOp::Div, e.clamp(e.bin(ExprOp::Add, x, e.c(3)), 0.0, 6.0), e.c(6));
}
int emit_hardswish(const Emitter& e) {
  int x = e.operand(0, e.out);
  return e.bin(ExprOp::Div, e.bin(ExprOp::Mul, x, e.clamp(e.bin(ExprOp::Add, x, e.c(3)), 0.0, 6.0)), e.c(6));
}
// g / 6 inside (-3, 3), else 0 (NaN too). LibTorch multiplies by 1/6 rounded to float in every
// dtype, f64 included. (hardswish_backward stays LibTorch's: at exactly 3 and at NaN, 1.13's CPU
// kernel answers one way in its vector loop and another in its scalar tail, and 2.x a third.)
int emit_hardsigmoid_backward(const Emitter& e) {
  int g = e.operand(0, e.out), x = e.operand(1, e.out);
  int inside = e.kb.binary(ExprOp::And, ElemType::Bool, e.kb.binary(ExprOp::Gt, ElemType::Bool, x, e.c(-3)),
                           e.kb.binary(ExprOp::Lt, ElemType::Bool, x, e.c(3)));
  return e.kb.where(e.out, inside, e.bin(ExprOp::Mul, g, e.c(static_cast<double>(1.0f / 6.0f))), e.c(0));
}
int emit_silu(const Emitter& e) {
  int x = e.operand(0, e.out);
  return e.bin(ExprOp::Mul, x, e.un(ExprOp::Sigmoid, x));
}
// tanh(k (x + c x^3)), k = sqrt(2 / pi), c = 0.044715: the tanh form of GELU and of its gradient.
constexpr double kGeluTanhC = 0.044715;
const double kGeluTanhK = std::sqrt(2.0 / M_PI);
int gelu_tanh(const Emitter& e, int x) {
  int x3 = e.bin(ExprOp::Mul, e.bin(ExprOp::Mul, x, x), x);
  int poly = e.bin(ExprOp::Add, x, e.bin(ExprOp::Mul, x3, e.c(kGeluTanhC)));
  return e.un(ExprOp::Tanh, e.bin(ExprOp::Mul, poly, e.c(kGeluTanhK)));
}
int emit_gelu(const Emitter& e) {
  int x = e.operand(0, e.out);
  bool tanh = e.op.args.size() > 1 && e.ctx.arg(e.op, 1).isString() && e.ctx.arg(e.op, 1).toStringRef() == "tanh";
  // x * Phi(x) with the normal CDF itself, not 0.5 * (1 + erf(x / sqrt 2)): in the negative tail
  // 1 + erf cancels to a few float ulps of 1, and GELU(-4.65) lost 3% of its value (seed 4242).
  if (!tanh) return e.bin(ExprOp::Mul, x, e.un(ExprOp::NormCdf, x));
  return e.bin(ExprOp::Mul, e.bin(ExprOp::Mul, x, e.c(0.5)), e.bin(ExprOp::Add, gelu_tanh(e, x), e.c(1)));
}
// g * GELU'(x). The exact form as one op that shares exp(-x^2 / 2) between Phi and phi; the tanh
// form term by term as LibTorch computes it: 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2) for
// t = tanh(k (x + c x^3)).
int emit_gelu_backward(const Emitter& e) {
  int g = e.operand(0, e.out), x = e.operand(1, e.out);
  bool tanh = e.ctx.arg(e.op, 2).toStringRef() == "tanh";
  if (!tanh) return e.bin(ExprOp::Mul, g, e.un(ExprOp::GeluGrad, x));
  int t = gelu_tanh(e, x);
  int left = e.bin(ExprOp::Mul, e.bin(ExprOp::Add, t, e.c(1)), e.c(0.5));
  int slope = e.bin(ExprOp::Mul, e.bin(ExprOp::Sub, e.c(1), e.bin(ExprOp::Mul, t, t)), e.c(kGeluTanhK));
  int right = e.bin(ExprOp::Mul, e.bin(ExprOp::Mul, e.bin(ExprOp::Mul, x, e.c(0.5)), slope),
                    e.bin(ExprOp::Add, e.bin(ExprOp::Mul, e.bin(ExprOp::Mul, x, x), e.c(3 * kGeluTanhC)), e.c(1)));
  return e.bin(ExprOp::Mul, g, e.bin(ExprOp::Add, left, right));
}
int emit_pow(const Emitter& e) {
  int x = e.operand(0, e.out);
  if (e.is_tensor(1)) return e.bin(ExprOp::Pow, x, e.operand(1, e.out));
  double p = e.scalar(1);
  if (p == 1) return x;
  if (p == 2) return e.bin(ExprOp::Mul, x, x);
  if (p == 3) return e.bin(ExprOp::Mul, e.bin(ExprOp::Mul, x, x), x);
  if (p == 0.5) return e.un(ExprOp::Sqrt, x);
  if (p == -0.5) return e.un(ExprOp::Rsqrt, x);
  if (p == -1) return e.un(ExprOp::Recip, x);
  return e.bin(ExprOp::Pow, x, e.c(p));
}
int emit_where(const Emitter& e) {
  return e.kb.where(e.out, e.operand(0, ElemType::Bool), e.operand(1, e.out), e.operand(2, e.out));
}
int emit_masked_fill(const Emitter& e) {
  return e.kb.where(e.out, e.operand(1, ElemType::Bool), e.operand(2, e.out), e.operand(0, e.out));
}
int emit_logical_not(const Emitter& e) { return e.kb.unary(ExprOp::Not, ElemType::Bool, e.operand(0, ElemType::Bool)); }

// Eval-mode batch norm as one multiply-add per element with per-channel constants.
int emit_batch_norm(const Emitter& e) {
  at::Tensor x = e.ctx.arg(e.op, 0).toTensor();
  c10::IValue w = e.ctx.arg(e.op, 1), b = e.ctx.arg(e.op, 2);
  at::Tensor mean = e.ctx.arg(e.op, 3).toTensor().to(at::kDouble), var = e.ctx.arg(e.op, 4).toTensor().to(at::kDouble);
  double eps = e.scalar(7);
  at::Tensor scale = (var + eps).rsqrt();
  if (w.isTensor()) scale = scale * w.toTensor().to(at::kDouble);
  at::Tensor shift = -mean * scale;
  if (b.isTensor()) shift = shift + b.toTensor().to(at::kDouble);
  std::vector<int64_t> shape(static_cast<size_t>(x.dim() - 1), 1);
  shape[0] = scale.numel();
  int s = e.cb.constant_tensor(scale.to(x.scalar_type()).reshape(shape).contiguous());
  int t = e.cb.constant_tensor(shift.to(x.scalar_type()).reshape(shape).contiguous());
  return e.bin(ExprOp::Add, e.bin(ExprOp::Mul, e.operand(0, e.out), e.kb.cast(s, e.out)), e.kb.cast(t, e.out));
}

int emit_softmax(const Emitter& e) {
  int x = e.operand(0, e.out);
  int m = e.kb.reduce(ExprOp::ReduceMax, x);
  int ex = e.un(ExprOp::Exp, e.bin(ExprOp::Sub, x, m));
  return e.bin(ExprOp::Div, ex, e.kb.reduce(ExprOp::ReduceSum, ex));
}
int emit_log_softmax(const Emitter& e) {
  int x = e.operand(0, e.out);
  int m = e.kb.reduce(ExprOp::ReduceMax, x);
  int shifted = e.bin(ExprOp::Sub, x, m);
  int s = e.kb.reduce(ExprOp::ReduceSum, e.un(ExprOp::Exp, shifted));
  return e.bin(ExprOp::Sub, shifted, e.un(ExprOp::Log, s));
}
int emit_layer_norm(const Emitter& e) {
  int x = e.operand(0, e.out);
  int n = e.kb.row_len(e.out);
  int mean = e.bin(ExprOp::Div, e.kb.reduce(ExprOp::ReduceSum, x), n);
  int d = e.bin(ExprOp::Sub, x, mean);
  int var = e.bin(ExprOp::Div, e.kb.reduce(ExprOp::ReduceSum, e.bin(ExprOp::Mul, d, d)), n);
  int y = e.bin(ExprOp::Mul, d, e.un(ExprOp::Rsqrt, e.bin(ExprOp::Add, var, e.c(e.scalar(4)))));
  if (e.is_tensor(2)) y = e.bin(ExprOp::Mul, y, e.operand(2, e.out));
  if (e.is_tensor(3)) y = e.bin(ExprOp::Add, y, e.operand(3, e.out));
  return y;
}
int emit_sum(const Emitter& e) { return e.kb.reduce(ExprOp::ReduceSum, e.operand(0, e.out)); }
int emit_mean(const Emitter& e) {
  return e.bin(ExprOp::Div, e.kb.reduce(ExprOp::ReduceSum, e.operand(0, e.out)), e.kb.row_len(e.out));
}

struct Entry {
  EmitFn emit;
  Kind kind;
};

const std::unordered_map<std::string, Entry>& table() {
  static const std::unordered_map<std::string, Entry> t = [] {
    std::unordered_map<std::string, Entry> m;
    auto pw = [&](std::initializer_list<const char*> names, EmitFn f) {
      for (const char* n : names) m[n] = {f, Kind::Pointwise};
    };
    pw({"aten::add", "aten::add_"}, emit_add);
    pw({"aten::sub", "aten::sub_"}, emit_sub);
    pw({"aten::rsub"}, emit_rsub);
    pw({"aten::mul", "aten::mul_"}, emit_mul);
    pw({"aten::div", "aten::div_"}, emit_div);
    pw({"aten::maximum"}, emit_max);
    pw({"aten::minimum"}, emit_min);
    pw({"aten::eq"}, emit_compare<ExprOp::Eq>);
    pw({"aten::ne"}, emit_compare<ExprOp::Ne>);
    pw({"aten::lt"}, emit_compare<ExprOp::Lt>);
    pw({"aten::le"}, emit_compare<ExprOp::Le>);
    pw({"aten::gt"}, emit_compare<ExprOp::Gt>);
    pw({"aten::ge"}, emit_compare<ExprOp::Ge>);
    pw({"aten::neg", "aten::neg_"}, emit_unary<ExprOp::Neg>);
    pw({"aten::abs", "aten::abs_"}, emit_unary<ExprOp::Abs>);
    pw({"aten::exp", "aten::exp_"}, emit_unary<ExprOp::Exp>);
    pw({"aten::log", "aten::log_"}, emit_unary<ExprOp::Log>);
    pw({"aten::sqrt", "aten::sqrt_"}, emit_unary<ExprOp::Sqrt>);
    pw({"aten::rsqrt", "aten::rsqrt_"}, emit_unary<ExprOp::Rsqrt>);
    pw({"aten::tanh", "aten::tanh_"}, emit_unary<ExprOp::Tanh>);
    pw({"aten::erf", "aten::erf_"}, emit_unary<ExprOp::Erf>);
    pw({"aten::sigmoid", "aten::sigmoid_"}, emit_unary<ExprOp::Sigmoid>);
    pw({"aten::sin", "aten::sin_"}, emit_unary<ExprOp::Sin>);
    pw({"aten::cos", "aten::cos_"}, emit_unary<ExprOp::Cos>);
    pw({"aten::floor", "aten::floor_"}, emit_unary<ExprOp::Floor>);
    pw({"aten::ceil", "aten::ceil_"}, emit_unary<ExprOp::Ceil>);
    pw({"aten::round", "aten::round_"}, emit_unary<ExprOp::Round>);
    pw({"aten::reciprocal", "aten::reciprocal_"}, emit_unary<ExprOp::Recip>);
    pw({"aten::logical_not"}, emit_logical_not);
    pw({"aten::relu", "aten::relu_"}, emit_relu);
    pw({"aten::relu6", "aten::relu6_"}, emit_relu6);
    pw({"aten::hardtanh", "aten::hardtanh_"}, emit_hardtanh);
    pw({"aten::clamp", "aten::clamp_"}, emit_clamp);
    pw({"aten::clamp_min", "aten::clamp_min_"}, emit_clamp_min);
    pw({"aten::clamp_max", "aten::clamp_max_"}, emit_clamp_max);
    pw({"aten::hardsigmoid", "aten::hardsigmoid_"}, emit_hardsigmoid);
    pw({"aten::hardswish", "aten::hardswish_"}, emit_hardswish);
    pw({"aten::hardsigmoid_backward"}, emit_hardsigmoid_backward);
    pw({"aten::silu", "aten::silu_"}, emit_silu);
    pw({"aten::gelu"}, emit_gelu);
    pw({"aten::gelu_backward"}, emit_gelu_backward);
    pw({"aten::pow"}, emit_pow);
    pw({"aten::where"}, emit_where);
    pw({"aten::masked_fill", "aten::masked_fill_"}, emit_masked_fill);
    pw({"aten::batch_norm"}, emit_batch_norm);
    pw({"aten::contiguous", "aten::dropout", "aten::dropout_", "aten::feature_dropout"}, emit_identity);
    m["aten::softmax"] = {emit_softmax, Kind::Row};
    m["aten::log_softmax"] = {emit_log_softmax, Kind::Row};
    m["aten::layer_norm"] = {emit_layer_norm, Kind::Row};
    m["aten::sum"] = {emit_sum, Kind::Row};
    m["aten::mean"] = {emit_mean, Kind::Row};
    m["aten::adaptive_avg_pool2d"] = {emit_mean, Kind::Row};
    return m;
  }();
  return t;
}

OpLowering none(std::string reason) {
  OpLowering l;
  l.reason = std::move(reason);
  return l;
}

// Reduction dims given as a list must be the trailing ones: the row of a row kernel.
int trailing_dims(const c10::IValue& dims, int64_t rank) {
  if (!dims.isIntList()) return 0;
  std::vector<int64_t> d = dims.toIntVector();
  if (d.empty()) return static_cast<int>(rank);
  for (auto& v : d) v = v < 0 ? v + rank : v;
  std::sort(d.begin(), d.end());
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] != rank - static_cast<int64_t>(d.size()) + static_cast<int64_t>(i)) return 0;
  }
  return static_cast<int>(d.size());
}

// A sum over the leading dims only keeps the trailing ones: how many (a column kernel's row), or
// 0 when the reduced dims are not a leading run.
int kept_trailing_dims(const c10::IValue& dims, int64_t rank) {
  if (!dims.isIntList()) return 0;
  std::vector<int64_t> d = dims.toIntVector();
  if (d.empty()) return 0;
  for (auto& v : d) v = v < 0 ? v + rank : v;
  std::sort(d.begin(), d.end());
  d.erase(std::unique(d.begin(), d.end()), d.end());
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] != static_cast<int64_t>(i)) return 0;
  }
  return static_cast<int>(rank - static_cast<int64_t>(d.size()));
}

// Row-op specifics: which dims, and whether the arguments allow a lowering.
OpLowering classify_row(const GraphOp& op, const LowerContext& ctx, const at::Tensor& x) {
  OpLowering l;
  l.kind = Kind::Row;
  int64_t rank = x.dim();
  const std::string& n = op.name;
  if (n == "aten::softmax" || n == "aten::log_softmax") {
    int64_t dim = ctx.arg(op, 1).toInt();
    if (rank == 0 || (dim != -1 && dim != rank - 1)) return none("softmax over a dimension that is not the last");
    if (op.args.size() > 2 && !ctx.arg(op, 2).isNone()) return none("softmax with a dtype");
    l.row_dims = 1;
  } else if (n == "aten::layer_norm") {
    l.row_dims = static_cast<int>(ctx.arg(op, 1).toIntVector().size());
  } else if (n == "aten::sum" || n == "aten::mean") {
    if (op.args.size() < 3) {
      l.row_dims = static_cast<int>(rank);  // full reduction
    } else {
      l.row_dims = trailing_dims(ctx.arg(op, 1), rank);
      if (op.args.size() > 3 && !ctx.arg(op, 3).isNone()) return none("reduction with a dtype");
      if (l.row_dims == 0 && n == "aten::sum" && x.is_floating_point()) {
        l.row_dims = kept_trailing_dims(ctx.arg(op, 1), rank);
        if (l.row_dims > 0) l.kind = Kind::Column;
      }
    }
    if (l.row_dims == 0) return none("reduction over dimensions that are neither the trailing nor the leading ones");
    l.per_row = true;
  } else if (n == "aten::adaptive_avg_pool2d") {
    auto out = ctx.arg(op, 1).toIntVector();
    if (out.size() != 2 || out[0] != 1 || out[1] != 1 || rank < 3) return none("adaptive pooling to more than 1x1");
    l.row_dims = 2;
    l.per_row = true;
  }
  if (rank == 0) return none("reduction of a scalar");
  return l;
}

}  // namespace

OpLowering classify_op(const GraphOp& op, const LowerContext& ctx) {
  auto it = table().find(op.name);
  if (it == table().end()) return none(fmt::format("no lowering for {}", op.name));
  if (op.outputs.size() != 1) return none("more than one output");
  const c10::IValue& result = ctx.slots[static_cast<size_t>(op.outputs[0])];
  if (!result.isTensor()) return none("output is not a tensor");
  ElemType t;
  auto lowered_type = [&](c10::ScalarType s, ElemType* e) { return to_elem_type(s, e) && (ctx.low_precision || !is_16_bit_float(*e)); };
  if (!lowered_type(result.toTensor().scalar_type(), &t)) {
    return none(fmt::format("dtype {}", c10::toString(result.toTensor().scalar_type())));
  }
  if (result.toTensor().device() != ctx.device) return none(fmt::format("not on {}", ctx.device.str()));
  for (size_t i = 0; i < op.args.size(); ++i) {
    const Arg& a = op.args[i];
    if (a.kind == Arg::Kind::Sym && a.sym->dynamic) return none("a dynamic scalar argument");
    if (a.kind == Arg::Kind::List) continue;
    c10::IValue v = ctx.arg(op, i);
    if (a.kind == Arg::Kind::Slot && !v.isTensor()) return none("a scalar argument computed at run time");
    if (v.isTensor()) {
      ElemType e;
      if (!lowered_type(v.toTensor().scalar_type(), &e)) return none(fmt::format("dtype {}", c10::toString(v.toTensor().scalar_type())));
      if (v.toTensor().device() != ctx.device) return none(fmt::format("not on {}", ctx.device.str()));
    }
  }
  const std::string& n = op.name;
  if (n == "aten::div" || n == "aten::div_") {
    if (op.args.size() > 2 && !ctx.arg(op, 2).isNone()) return none("division with a rounding mode");
  }
  if (n == "aten::dropout" || n == "aten::dropout_" || n == "aten::feature_dropout") {
    if (ctx.arg(op, 2).toBool()) return none("dropout in training mode");
  }
  if (n == "aten::contiguous" && ctx.arg(op, 0).toTensor().is_contiguous()) return none("contiguous of a contiguous tensor");
  if (n == "aten::batch_norm") {
    if (ctx.arg(op, 5).toBool()) return none("batch norm in training mode");
    for (size_t i = 1; i <= 4; ++i) {
      if (op.args[i].kind != Arg::Kind::Constant) return none("batch norm with parameters computed at run time");
    }
    if (ctx.arg(op, 0).toTensor().dim() < 2) return none("batch norm of a vector");
  }
  if (n == "aten::gelu" && op.args.size() > 1 && !ctx.arg(op, 1).isString()) return none("gelu argument");
  if (n == "aten::gelu_backward" && (op.args.size() < 3 || !ctx.arg(op, 2).isString())) return none("gelu argument");
  if ((n == "aten::floor" || n == "aten::ceil" || n == "aten::round") && !is_floating(t)) return none("integer rounding");
  if (t == ElemType::Bool && n != "aten::eq" && n != "aten::ne" && n != "aten::lt" && n != "aten::le" &&
      n != "aten::gt" && n != "aten::ge" && n != "aten::logical_not" && n != "aten::where" &&
      n != "aten::masked_fill" && n != "aten::masked_fill_" && n != "aten::contiguous") {
    return none("arithmetic on bool");
  }
  if (it->second.kind == Kind::Row) return classify_row(op, ctx, ctx.arg(op, 0).toTensor());
  OpLowering l;
  l.kind = Kind::Pointwise;
  return l;
}

int emit_op(const GraphOp& op, const LowerContext& ctx, KernelBuilder& kb, const EmitCallbacks& cb) {
  const auto& entry = table().at(op.name);
  ElemType out = ElemType::F32;
  to_elem_type(ctx.slots[static_cast<size_t>(op.outputs[0])].toTensor().scalar_type(), &out);
  Emitter e{op, ctx, kb, cb, out};
  return entry.emit(e);
}

}  // namespace tcprof
