// Convolutions in channels-last on the GPU where that measures faster. With NCHW weights and
// activations cuDNN runs its NHWC kernels between layout transposes of every convolution's input
// and output (ResNet18 at batch 32 on an H200: 0.41 ms of a 2.3 ms call); with channels-last
// weights LibTorch hands cuDNN channels-last activations, and the graph's generated kernels follow
// the layout eager gives their outputs (schedule_fusion's eager_output_order).
#pragma once
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "compiler/ir/captured_graph.h"

namespace tcprof {

struct PassContext;

// A convolution's constant bias becomes an add after it (conv2d(x, w, b) -> conv2d(x, w) + b viewed
// [1, C, 1, 1]), which fuses into the generated kernel that follows (the residual add and ReLU):
// LibTorch adds a cuDNN convolution's bias in an elementwise kernel of its own, one more pass over
// every activation (ResNet18 at batch 32 on an H200: about 0.25 ms of a 1.56 ms call). Returns how
// many. Until the caller runs the graph again, the convolution's and the sum's examples are both
// the biased output: right in shape, dtype and layout, not in value.
int split_conv_bias(PassContext& ctx);

// Runs the graph on its device once each way (after a warm-up, median of three, the device's
// time) and keeps the faster layout for the constant 4-D weights of its convolutions. Returns
// whether channels-last was kept; `why` says what was measured. A graph off the GPU, or without
// such a convolution, is left as it is.
bool choose_conv_channels_last(CapturedGraph& g, const std::vector<c10::IValue>& inputs, std::string* why);

}  // namespace tcprof
