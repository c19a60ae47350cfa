// Attention as one kernel. The chain
//   matmul(q, kT) [* or / a scalar] [masked_fill(a constant mask, -inf)] softmax(-1) matmul(., v)
// whose intermediate values nothing else reads becomes one generated kernel over blocks of query
// rows (codegen_attention.cpp): the B x H x T x S scores are never written to memory, and the keys
// the constant mask removes from every row of a block are not computed at all (half of a causal
// mask). The step runs where the second matmul was; the autotune phase keeps LibTorch's ops where
// they are faster. nn.MultiheadAttention's fused inference op (aten::_native_multi_head_attention,
// ViT's) runs its two projections through LibTorch around the same kernel.
#pragma once
#include <vector>

#include "compiler/backends/cpp/lower/loop_ir.h"
#include "compiler/backends/cpp/lower/lower_ops.h"

namespace tcprof {

struct AttentionPlan {
  std::vector<WindowKernel> kernels;  // Kind::Attention, unnamed
  std::vector<int> kernel_of_op;      // per op: the kernel that computes it, else -1
};

// Projection weights of native multi-head attention are appended to `constants`.
AttentionPlan plan_attention(const CapturedGraph& graph, const LowerContext& ctx, std::vector<at::Tensor>& constants);

// The cuda backend's plan: the same matmul / scale / mask / softmax / matmul chains on any device
// and in f32, bf16 or f16, each as one ScaledDotProductAttention step (where the LibTorch has it,
// TCPROF_HAVE_SDPA), when every query row keeps at least one key (an all-masked row is NaN in
// eager). The causal mask becomes is_causal; another mask a constant boolean one in `constants`.
AttentionPlan plan_scaled_dot_product_attention(const CapturedGraph& graph, const LowerContext& ctx,
                                                std::vector<at::Tensor>& constants);

}  // namespace tcprof
