#include "compiler/backends/cpp/schedule/plan_gemm.h"

#include "compiler/backends/cpp/run/onednn_gemm.h"

namespace tcprof {

namespace {

bool float_cpu(const c10::IValue& v) {
  if (!v.isTensor()) return false;
  const at::Tensor& t = v.toTensor();
  return t.scalar_type() == at::kFloat && t.device().is_cpu() && t.layout() == at::kStrided;
}

// Column-major: its rows are further apart than its columns.
bool transposed(const at::Tensor& t) { return t.dim() >= 2 && t.stride(-1) != 1 && t.stride(-2) == 1; }

}  // namespace

std::optional<WindowKernel> plan_gemm(const CapturedGraph& graph, int index, const LowerContext& ctx) {
  const GraphOp& op = graph.ops[static_cast<size_t>(index)];
  const bool linear = op.name == "aten::linear", mm = op.name == "aten::mm", matmul = op.name == "aten::matmul";
  if ((!linear && !mm && !matmul) || !onednn_gemm_available() || op.outputs.size() != 1) return std::nullopt;
  if (op.args.size() < 2 || op.args[0].kind != Arg::Kind::Slot || op.args[1].kind != Arg::Kind::Slot) return std::nullopt;
  const size_t expected_args = linear ? 3 : 2;
  if (op.args.size() > expected_args) return std::nullopt;
  const c10::IValue &av = ctx.slots[static_cast<size_t>(op.args[0].slot)], &bv = ctx.slots[static_cast<size_t>(op.args[1].slot)];
  if (!float_cpu(av) || !float_cpu(bv) || !float_cpu(ctx.slots[static_cast<size_t>(op.outputs[0])])) return std::nullopt;
  const at::Tensor &a = av.toTensor(), &b = bv.toTensor();
  if (a.dim() < 2 || b.dim() < 2 || (mm && a.dim() != 2) || a.numel() == 0 || b.numel() == 0) return std::nullopt;
  // A batched matmul: the same batch dimensions on both sides (no broadcasting).
  const bool batched = matmul && b.dim() > 2;
  if (batched && (a.dim() != b.dim() || a.sizes().slice(0, a.dim() - 2) != b.sizes().slice(0, b.dim() - 2))) return std::nullopt;
  if (!batched && b.dim() != 2) return std::nullopt;
  const int64_t k_size = a.size(-1);
  if ((linear ? b.size(1) : b.size(-2)) != k_size) return std::nullopt;
  WindowKernel k;
  k.kind = WindowKernel::Kind::Gemm;
  k.op = index;
  k.input_slot = op.args[0].slot;
  k.output_slot = op.outputs[0];
  k.gemm.b_slot = op.args[1].slot;
  k.gemm.b_is_weight = linear;
  if (linear && op.args.size() == 3) {
    const Arg& bias = op.args[2];
    if (bias.kind == Arg::Kind::Slot) {
      const c10::IValue& biasv = ctx.slots[static_cast<size_t>(bias.slot)];
      if (!float_cpu(biasv) || biasv.toTensor().dim() != 1 || biasv.toTensor().size(0) != b.size(0)) return std::nullopt;
      k.gemm.bias_slot = bias.slot;
    } else if (bias.kind != Arg::Kind::Constant || !bias.constant.isNone()) {
      return std::nullopt;  // a constant bias beside a weight of the graph: not worth a kernel kind
    }
  }
  k.n = a.numel() / k_size;  // rows, as compiled (every batch's)
  k.c = k_size;
  k.out_features = linear ? b.size(0) : b.size(-1);
  k.gemm.batch = batched ? a.numel() / (a.size(-2) * k_size) : 1;
  k.gemm.a_transposed = transposed(a);
  // linear reads its [N, K] weight as the [K, N] operand: transposed when the weight is row-major.
  k.gemm.b_transposed = linear ? !transposed(b) : transposed(b);
  return k;
}

}  // namespace tcprof
