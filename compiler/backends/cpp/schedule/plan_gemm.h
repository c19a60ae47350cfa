// Matrix products whose operands are both values of the graph, as oneDNN matmul calls on the
// operands' own strides (run/onednn_gemm.h), each autotuned against LibTorch's op (MKL's or
// OpenBLAS's GEMM): in a training graph the weights are inputs, so the linears and every gradient
// GEMM are of this kind. On the AVX2 EPYC (oneDNN 3.2 against MKL, 1 thread, the GPT's training
// graphs) the forward linears ran 4-19% faster through oneDNN, the input gradients 3-9% and the
// attention's batched products (128 x 32 x 128 per head) 23-33%; the weight gradients ran 8-17%
// slower, and the race keeps LibTorch's for those.
//   aten::linear(x [.., K], w [N, K], bias [N] or None)  -> rows(x) @ w^T (+ bias)
//   aten::mm(a [M, K], b [K, N])                         -> a @ b
//   aten::matmul(a [.., K], b [K, N])                    -> rows(a) @ b
//   aten::matmul(a [.., M, K], b [.., K, N])             -> one batched product (the same batch
//                                                           dimensions on both: attention's)
// Float on the CPU only, and only where this build has oneDNN (not with TCPROF_ONEDNN=0).
#pragma once
#include <optional>

#include "compiler/backends/cpp/lower/loop_ir.h"
#include "compiler/backends/cpp/lower/lower_ops.h"

namespace tcprof {

// The Gemm kernel for graph op `index` (unnamed), or nothing where it is not such a product.
std::optional<WindowKernel> plan_gemm(const CapturedGraph& graph, int index, const LowerContext& ctx);

}  // namespace tcprof
