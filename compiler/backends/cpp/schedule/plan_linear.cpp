#include "compiler/backends/cpp/schedule/plan_linear.h"

#include <algorithm>

namespace tcprof {

std::optional<WindowKernel> plan_linear(const CapturedGraph& graph, int index, const LowerContext& ctx,
                                        std::vector<at::Tensor>& constants) {
  const GraphOp& op = graph.ops[static_cast<size_t>(index)];
  if (op.name != "aten::linear" || op.args.size() < 2 || op.outputs.size() != 1) return std::nullopt;
  if (op.args[0].kind != Arg::Kind::Slot || op.args[1].kind != Arg::Kind::Constant || !op.args[1].constant.isTensor()) {
    return std::nullopt;
  }
  if (op.args.size() > 2 && op.args[2].kind != Arg::Kind::Constant) return std::nullopt;
  const c10::IValue& xv = ctx.slots[static_cast<size_t>(op.args[0].slot)];
  if (!xv.isTensor() || !ctx.slots[static_cast<size_t>(op.outputs[0])].isTensor()) return std::nullopt;
  const at::Tensor& x = xv.toTensor();
  const at::Tensor& w = op.args[1].constant.toTensor();
  c10::IValue b = op.args.size() > 2 ? op.args[2].constant : c10::IValue();
  if (x.scalar_type() != at::kFloat || !x.device().is_cpu() || x.layout() != at::kStrided || x.dim() < 2 ||
      x.requires_grad() || w.dim() != 2 || w.scalar_type() != at::kFloat || !w.device().is_cpu() ||
      w.layout() != at::kStrided || w.size(1) != x.size(-1)) {
    return std::nullopt;
  }
  if (!b.isNone() && (!b.isTensor() || b.toTensor().scalar_type() != at::kFloat || b.toTensor().dim() != 1 ||
                      b.toTensor().size(0) != w.size(0))) {
    return std::nullopt;
  }
  WindowKernel k;
  k.op = index;
  k.input_slot = op.args[0].slot;
  k.output_slot = op.outputs[0];
  k.n = x.numel() / std::max<int64_t>(1, x.size(-1));  // rows, as compiled (the timings depend on it)
  k.c = x.size(-1), k.out_features = w.size(0);
  if (x.dim() == 2 && x.size(0) == 1) {
    k.kind = WindowKernel::Kind::LinearGemv;
    k.weight_slot = static_cast<int>(constants.size());
    constants.push_back(w.contiguous());
  } else {
    if (x.numel() == 0) return std::nullopt;
    k.kind = WindowKernel::Kind::LinearGemm;
    k.weight_slot = static_cast<int>(constants.size());
    constants.push_back(w);  // [N, K]: the runner transposes it once the kernel is measured or chosen
  }
  if (b.isTensor()) {
    k.bias_slot = static_cast<int>(constants.size());
    constants.push_back(b.toTensor().contiguous());
  }
  return k;
}

}  // namespace tcprof
