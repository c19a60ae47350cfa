// The fusion scheduler: walks the graph in order and groups lowerable ops into kernels.
//   - an op joins the kernel of a producer (or of a sibling reading the same input) when it runs
//     over the same index space: pointwise chains, a reduction with its prologue and epilogue
//     (scale + mask + softmax; residual add + layer norm + its affine tail);
//   - an op that reads two open kernels over the same index space merges them (batch norm's
//     backward: x-hat and the masked gradient meet in one product), so neither writes a value
//     out only for the other to read it back;
//   - every op is computed once per element (no fusion recomputes work), and a kernel is closed
//     as soon as anything outside it must read one of its values, so it runs before that reader;
//   - values read outside a kernel become its outputs; everything else stays in registers;
//   - convolutions chains run through oneDNN in its blocked layout with fused post-ops (the layout
//     pass, plan_onednn_layout.h); other depthwise convolutions and max pooling become directly
//     generated kernels; attention (matmul, scale, constant mask, softmax, matmul) becomes one
//     generated kernel (plan_attention.h).
// Ops that are not lowered stay extern steps.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "compiler/backends/cpp/lower/loop_ir.h"
#include "compiler/backends/cpp/lower/lower_ops.h"

namespace tcprof {

struct FallbackOp {
  int op = -1;
  std::string reason;
};

class OnednnConvolution;

struct ScheduledProgram {
  LoopProgram program;
  std::vector<std::shared_ptr<OnednnConvolution>> onednn;  // per program.onednn_convs: primitives
  std::vector<at::Tensor> constants;  // KernelInput::constant and native weights index these
  std::vector<FallbackOp> fallbacks;  // ops kept as LibTorch calls that are not extern by design
};

// The lowering decision for every op (the "lower" phase).
std::vector<OpLowering> lower_graph_ops(const CapturedGraph& graph, const LowerContext& ctx);

// What the program is scheduled for. The fusion of pointwise and row kernels is the same for every
// target; the CPU's planners (oneDNN chains, directly generated convolutions and pools, BLAS
// linears, the CPU attention kernel) run for Cpu only. For Cuda those ops stay extern steps,
// LibTorch calls into cuBLAS and cuDNN, and attention chains become one
// scaled_dot_product_attention call each (plan_attention.h).
enum class ScheduleTarget : uint8_t { Cpu, Cuda };

ScheduledProgram schedule_graph(const CapturedGraph& graph, const LowerContext& ctx,
                                const std::vector<OpLowering>& lowerings, ScheduleTarget target = ScheduleTarget::Cpu);

}  // namespace tcprof
