// A convolution's ReLU, and a residual add before it, inside cuDNN's convolution (LibTorch's
// cudnn_convolution_relu and cudnn_convolution_add_relu, the fusions TorchScript's frozen CUDA
// graphs use): relu(conv(x, w) + bias [+ residual]) written once, where the generated kernel after
// the convolution reads its output again and writes it again (ResNet18 at batch 32 on an H200: the
// first convolution's ReLU took 109 us for 103 MB each way).
//
// Off by default until a GPU measures it: which cuDNN engine takes an f32 or TF32 fused
// convolution is cuDNN's choice, and it may be slower than the plain convolution and our kernel.
// TCPROF_CUDA_CONV_EPILOGUES=1 turns it on (scripts/gpu-check.sh benches ResNet18 both ways).
#pragma once
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/util/Optional.h>

namespace tcprof {

struct PassContext;

// tcprof::conv_relu(input, weight, bias?, residual?, stride, padding, dilation, groups):
// relu(conv2d(input, weight, bias) + residual). On a GPU, cuDNN's fused call; when cuDNN refuses it
// (no engine for these tensors) and elsewhere, the convolution, the add and the ReLU one by one.
constexpr const char* kConvReluOp = "tcprof::conv_relu";
at::Tensor conv_relu(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                     const c10::optional<at::Tensor>& residual, at::IntArrayRef stride, at::IntArrayRef padding,
                     at::IntArrayRef dilation, int64_t groups);

// Whether TCPROF_CUDA_CONV_EPILOGUES asks for the pass ("1"; unset or "0": no). Anything else is a
// usage error.
bool conv_epilogues_from_env();

// aten::conv2d (numeric padding) whose output only aten::relu reads, or only an aten::add (alpha 1,
// with a tensor of the output's shape and dtype) that only aten::relu reads, becomes one
// tcprof::conv_relu. Returns one line per rewrite for the compile report's kernel groups.
std::vector<std::string> fuse_conv_relu(PassContext& ctx);

}  // namespace tcprof
