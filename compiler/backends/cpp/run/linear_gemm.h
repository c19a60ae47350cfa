// Linear layers against a weight transposed once at compile time. LibTorch's linear hands BLAS
// the [N, K] weight as a transposed operand on every call, and OpenBLAS packs a transposed
// operand more slowly than a plain one: with the weight stored [K, N] the same GEMM is 2-3%
// faster, and 6-8% for ViT-B's MLP projection (K = 3072), at one thread. The weights are treated
// as constants, as everywhere in the compiled graph (TorchScript's freeze does the same).
#pragma once
#include <ATen/ATen.h>

namespace tcprof {

// w [N, K] -> a new contiguous [K, N] (a tiled copy: ATen's strided copy of a transposed weight
// is 3-5x slower, and ViT-B transposes 340 MB of weights at every start).
at::Tensor transposed_weight(const at::Tensor& w);

// x [..., K] @ wt [K, N] (+ bias [N]) -> contiguous [..., N], as one GEMM over the flattened rows.
at::Tensor linear_transposed(const at::Tensor& x, const at::Tensor& wt, const at::Tensor* bias);

}  // namespace tcprof
