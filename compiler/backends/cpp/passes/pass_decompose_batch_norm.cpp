// Eval-mode batch norm whose parameters are values of the graph (a training graph's weight and
// bias are its inputs) cannot fold into a convolution nor lower with constant scales, so it ran
// as a LibTorch call, and the activation after it as a pass of its own. Written as eager computes
// it, per channel alpha = w / sqrt(var + eps) and beta = b - mean * alpha, then x * alpha + beta,
// the per-element part is pointwise and fuses with what follows (MobileNetV2's ReLU6).
#include <ATen/ATen.h>

#include "compiler/backends/cpp/passes/pass_builder.h"

namespace tcprof {
namespace {

bool is_constant(const Arg& a) { return a.kind == Arg::Kind::Constant; }

// A parameter argument as the builder takes it, or false when it is neither a tensor of `x`'s
// dtype and channel count nor None.
bool parameter(const PassContext& ctx, const Arg& a, const at::Tensor& x, BuildArg* out, bool* present) {
  c10::IValue v = example_value(ctx, a);
  if (a.kind == Arg::Kind::Constant && v.isNone()) {
    *present = false;
    return true;
  }
  if ((a.kind != Arg::Kind::Slot && a.kind != Arg::Kind::Constant) || !v.isTensor()) return false;
  const at::Tensor& t = v.toTensor();
  if (t.dim() != 1 || t.size(0) != x.size(1) || t.scalar_type() != x.scalar_type() || t.device() != x.device()) return false;
  *present = true;
  *out = a.kind == Arg::Kind::Slot ? BuildArg(Val{a.slot}) : BuildArg(a.constant);
  return true;
}

}  // namespace

int decompose_batch_norm(PassContext& ctx) {
  CapturedGraph& g = ctx.graph;
  PassBuilder b(ctx);
  std::vector<GraphOp> original = b.take_ops();
  int count = 0;
  for (GraphOp& op : original) {
    bool eval = op.name == "aten::batch_norm" && op.args.size() >= 8 && op.outputs.size() == 1 &&
                op.args[0].kind == Arg::Kind::Slot && is_constant(op.args[5]) && op.args[5].constant.isBool() &&
                !op.args[5].constant.toBool() && is_constant(op.args[7]);
    bool all_constant = true;
    for (size_t i = 1; eval && i <= 4; ++i) all_constant = all_constant && is_constant(op.args[i]);
    if (!eval || all_constant) {  // folded or lowered with constant scales (lower_ops.cpp)
      g.ops.push_back(std::move(op));
      continue;
    }
    const c10::IValue& xv = ctx.examples[static_cast<size_t>(op.args[0].slot)];
    BuildArg w(0), bias(0), mean(0), var(0);
    bool has_w = false, has_b = false, has_mean = false, has_var = false;
    bool ok = xv.isTensor() && xv.toTensor().dim() >= 2 &&
              (xv.toTensor().scalar_type() == at::kFloat || xv.toTensor().scalar_type() == at::kDouble);
    if (ok) {
      const at::Tensor& x = xv.toTensor();
      ok = parameter(ctx, op.args[1], x, &w, &has_w) && parameter(ctx, op.args[2], x, &bias, &has_b) &&
           parameter(ctx, op.args[3], x, &mean, &has_mean) && parameter(ctx, op.args[4], x, &var, &has_var) &&
           has_mean && has_var;
    }
    if (!ok) {
      g.ops.push_back(std::move(op));
      continue;
    }
    const at::Tensor x = xv.toTensor();
    const double eps = op.args[7].constant.toDouble();
    std::vector<int64_t> channel(static_cast<size_t>(x.dim() - 1), 1);
    channel[0] = -1;  // [C, 1, ...]: C is the parameters' length
    auto value = [&](const BuildArg& a) {
      return a.slot >= 0 ? ctx.examples[static_cast<size_t>(a.slot)].toTensor() : a.constant.toTensor();
    };
    auto emit = [&](const char* name, const std::vector<BuildArg>& args, const at::Tensor& example) {
      return b.emit(name, args, &op, example);
    };
    // Per channel, as eager's batch_norm_cpu_collect_linear_and_constant_terms.
    at::Tensor var_eps = value(var) + eps, a = var_eps.rsqrt();
    Val alpha = emit("aten::rsqrt", {emit("aten::add", {var, eps}, var_eps)}, a);
    if (has_w) {
      a = a * value(w);
      alpha = emit("aten::mul", {alpha, w}, a);
    }
    at::Tensor shift = value(mean) * a, be = has_b ? value(bias) - shift : -shift;
    Val shifted = emit("aten::mul", {mean, alpha}, shift);
    Val beta = has_b ? emit("aten::sub", {bias, shifted}, be) : emit("aten::neg", {shifted}, be);
    // Per element.
    at::Tensor ar = a.reshape(channel), br = be.reshape(channel), xa = x * ar;
    Val scaled = emit("aten::mul", {Val{op.args[0].slot}, emit("aten::reshape", {alpha, channel}, ar)}, xa);
    Val y = emit("aten::add", {scaled, emit("aten::reshape", {beta, channel}, br)}, xa + br);
    b.rename(op.outputs[0], y.slot);
    ++count;
  }
  b.apply_renames();
  return count;
}

}  // namespace tcprof
