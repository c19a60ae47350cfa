// A linear followed by ReLU or tanh-GELU as one cuBLASLt call with the activation in its epilogue
// (LibTorch's _addmm_activation on a GPU): the activation costs no pass of its own over the
// linear's output (a [8192, 4096] f32 output is 256 MB read and written, about 60 us on an H200).
// cuBLASLt's GELU epilogue is the tanh form, so the exact GELU (the default of F.gelu) stays a
// generated kernel.
#pragma once
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace tcprof {

struct PassContext;

// The op the pass writes, tcprof::linear_activation(input, weight, bias, activation): on a GPU
// _addmm_activation over the input's rows; elsewhere the same addmm and the activation after it.
// `activation` is "relu" or "gelu_tanh".
constexpr const char* kLinearActivationOp = "tcprof::linear_activation";
at::Tensor linear_activation(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                             const std::string& activation);

// aten::linear with a bias whose only reader is aten::relu or aten::gelu(approximate='tanh')
// becomes one tcprof::linear_activation. Returns one line per rewrite for the compile report's
// kernel groups ("linear_relu (cuBLASLt epilogue): aten::linear, aten::relu").
std::vector<std::string> fuse_linear_activation(PassContext& ctx);

}  // namespace tcprof
