// Linear layers with constant weights as direct BLAS calls, each autotuned against LibTorch's
// linear (the slower choice is dropped, and with it the weight copy):
//   one row (a classifier at batch 1)  -> LinearGemv: BLAS's matrix-vector product; LibTorch runs
//                                         it as a one-row GEMM, about half as fast;
//   more rows                          -> LinearGemm: one GEMM against the weight transposed once
//                                         (run/linear_gemm.h), when the autotune phase measures it
//                                         or keeps it: a weight LibTorch's linear wins with is never
//                                         copied (a warm start reads the decision and copies only
//                                         the kept ones).
#pragma once
#include <optional>
#include <vector>

#include "compiler/backends/cpp/lower/loop_ir.h"
#include "compiler/backends/cpp/lower/lower_ops.h"

namespace tcprof {

// The kernel for graph op `index` when it is a float inference linear with constant weight and
// bias (unnamed); the weight it needs is appended to `constants`.
std::optional<WindowKernel> plan_linear(const CapturedGraph& graph, int index, const LowerContext& ctx,
                                        std::vector<at::Tensor>& constants);

}  // namespace tcprof
