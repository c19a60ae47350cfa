// The layout pass. Convolutions (batch norm already folded into them) run through oneDNN on
// activations in its blocked layout, as TorchScript's optimize_for_inference does, and go further:
//   - weights are reordered once, at compile time, into the layout the primitive computes with;
//   - a residual add after a convolution becomes oneDNN's sum post-op of the convolution that runs
//     last of its two operands (ResNet's downsample branch), an activation after it (relu, relu6
//     and hardtanh, hardswish, silu, sigmoid, tanh, gelu) an eltwise post-op: no pass over memory
//     of their own;
//   - a global average pool of a step's output, and a per-channel scale of a step's input (the
//     squeeze-and-excitation of EfficientNet), run inside the step on its own buffers;
//   - a channel concatenation of chain values, and a max pool of one, run on the chain's buffers as
//     steps of their own (SqueezeNet's fire modules and the pools between them);
//   - every value a chain step produces gets a layout from its readers: blocked when only chain
//     steps read it, dense (NCHW) when anything else does, both when both do. So reorders remain
//     only where a value enters or leaves a chain; `explain` lists them.
// TCPROF_ONEDNN=0 turns the pass off (convolutions then run as before: generated depthwise, 1x1 as
// GEMM, the rest through LibTorch).
#pragma once
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "compiler/backends/backend.h"
#include "compiler/backends/cpp/lower/loop_ir.h"
#include "compiler/backends/cpp/lower/lower_ops.h"

namespace tcprof {

class OnednnConvolution;

struct OnednnLayoutPlan {
  std::vector<OnednnConv> convs;
  std::vector<std::shared_ptr<OnednnConvolution>> primitives;  // per conv, built and weights prepacked
  std::vector<int> step_of_op;  // per op: the conv whose step computes it (its conv or a post-op), else -1
  std::vector<ChainChannelOp> channel_ops;
  std::vector<int> channel_op_of_op;  // per op: the channel op it is, else -1
};

// A plan with no chain: every op keeps its own step (the pass off, or a device without oneDNN).
OnednnLayoutPlan no_layout_plan(const CapturedGraph& graph);

// Plans the chains of `graph`; prepacked weights and biases are appended to `constants`.
OnednnLayoutPlan plan_onednn_layout(const CapturedGraph& graph, const LowerContext& ctx, std::vector<at::Tensor>& constants);

// What the chains of a scheduled program do with layouts: counts, and each reorder that remains
// (values entering or leaving a chain, or two primitives that chose different layouts).
LayoutReport layout_report(const CapturedGraph& graph, const std::vector<OnednnConv>& convs,
                           const std::vector<ChainChannelOp>& channel_ops,
                           const std::vector<std::shared_ptr<OnednnConvolution>>& primitives);

}  // namespace tcprof
