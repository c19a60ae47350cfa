// A matrix product of two values computed at run time (a training graph's linear, whose weight is
// an input, and its gradients' mm and matmul) through oneDNN's matmul, reading both operands with
// the strides they have: a transposed weight or gradient is not copied first. On the AVX2 EPYC at
// one thread, oneDNN 3.2's GEMM took 3-14% less than MKL's (LibTorch's call) on the GPT's
// forward linears and input gradients, and 4-15% more on its weight gradients (a transposed left
// operand); the autotune phase keeps whichever is faster for each (schedule/plan_gemm.h). Only
// this file's implementation includes oneDNN (through run/onednn_support.h).
#pragma once
#include <optional>

#include <ATen/core/Tensor.h>

namespace tcprof {

// Whether this build can run OnednnGemm (built with oneDNN's headers and TCPROF_ONEDNN is not 0).
bool onednn_gemm_available();

// a [M, K] @ b [K, N] (+ bias [N]) -> a new contiguous [M, N], or batched a [.., M, K] @ b [.., K, N]
// -> [.., M, N] (the same batch dimensions, 6 dimensions at most; no bias), float on the CPU, any strides
// (oneDNN reads the operands where they lie: attention's q and k are views of one projection). std::nullopt where oneDNN cannot take these operands (a
// zero or negative stride, a size it refuses, a failed execute): the caller runs LibTorch's op.
// The primitive for each distinct shape and stride pattern is made once and kept (thread-safe).
std::optional<at::Tensor> onednn_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor* bias);

}  // namespace tcprof
