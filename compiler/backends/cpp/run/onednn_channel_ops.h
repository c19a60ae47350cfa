// The channel ops of an oneDNN chain (ChainChannelOp in loop_ir.h) at run time: a channel
// concatenation or a max pool computed by LibTorch over views of the chain's own buffers (nchw,
// nhwc, or nChwBc seen as [N, C/B, H, W, B]), so that SqueezeNet's fire modules and the pools
// between them never reorder a value out of the chain and back.
#pragma once
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "compiler/backends/cpp/lower/loop_ir.h"
#include "compiler/backends/cpp/run/onednn_convolution.h"

namespace tcprof {

// The layout `op` computes in, given its inputs' layouts ("nhwc", "nChw16c", ...): their common one
// where it has a view and, for a cat of blocked inputs, every input but the last fills whole blocks
// (the output's blocks are then the inputs' blocks one after the other); else "nchw", each input
// converted to NCHW first. The run and `explain`'s reorder list both read it.
std::string channel_op_format(const ChainChannelOp& op, const std::vector<std::string>& input_formats);

// Runs `op`. Input i comes blocked (`blocked_inputs[i]`, held by its chain step) or, where that is
// null, dense (`dense_inputs[i]`, NCHW contiguous). Fills `blocked` and/or `dense` as the op's
// output layout asks. Returns false when an input is missing or has another shape (the caller then
// runs the op through LibTorch).
bool run_channel_op(const ChainChannelOp& op, const std::vector<const BlockedValue*>& blocked_inputs,
                    const std::vector<const at::Tensor*>& dense_inputs, BlockedValue* blocked, at::Tensor* dense);

}  // namespace tcprof
