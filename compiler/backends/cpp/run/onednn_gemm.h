// A matrix product of two values computed at run time (a training graph's linear, whose weight is
// an input, its attention's batched products and its gradients' mm and matmul) through oneDNN's
// matmul, reading both operands with the strides they have: a transposed weight or gradient, or
// attention's q and k as views of one projection, is not copied first. The autotune phase races it
// against LibTorch's op per GEMM (schedule/plan_gemm.h). Only this file's implementation includes
// oneDNN (through run/onednn_support.h).
#pragma once
#include <optional>

#include <ATen/core/Tensor.h>

namespace tcprof {

// Whether this build can run onednn_gemm (built with oneDNN's headers and TCPROF_ONEDNN is not 0).
bool onednn_gemm_available();

// a [M, K] @ b [K, N] (+ bias [N]) -> a new contiguous [M, N], or batched a [.., M, K] @ b [.., K, N]
// -> [.., M, N] (the same batch dimensions, 6 dimensions at most, no bias), float on the CPU, with
// any strides but negative ones and zero ones of a dimension longer than 1 (an expanded operand).
// std::nullopt where it cannot take the operands, or oneDNN refuses them or fails to execute: the
// caller runs LibTorch's op. The primitive for each distinct shape and stride pattern is made once
// and kept (thread-safe).
std::optional<at::Tensor> onednn_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor* bias);

// Runs one small GEMM through oneDNN, once per process. oneDNN generates its GEMM kernels' code at
// the first GEMM a process executes (25-90 ms on the 2-core EPYC), for every matmul after it: on a
// warm start, where no autotune race ran one first, a user's first call paid it and its profile
// blamed whichever oneDNN GEMM ran first (80% of the demo's kernel time). Compiling a graph with a
// oneDNN GEMM calls this, so the cost is compile time, where it belongs. A no-op without oneDNN.
void warm_onednn_gemm();

}  // namespace tcprof
