// The index space a kernel runs over, made canonical the same way at compile time and at every
// call: operands are aligned to the full shape (right-aligned; broadcast dimensions get stride 0),
// size-1 dimensions are dropped, adjacent dimensions that are contiguous for every operand are
// merged, and the result is padded with leading 1s to the kernel's rank. So [8,64,56,56] + bias
// [64,1,1] runs as a 2-d loop, and a contiguous [4,128,256] chain as one flat loop. No LibTorch.
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/backends/cpp/lower/loop_ir.h"

namespace tcprof {

struct OperandLayout {
  std::vector<int64_t> sizes, strides;
};

struct IndexSpace {
  std::vector<int64_t> sizes;                 // `rank` entries
  std::vector<std::vector<int64_t>> strides;  // per operand, `rank` entries
};

// Broadcast shape of the operands; false when they do not broadcast.
bool broadcast_shapes(const std::vector<const std::vector<int64_t>*>& shapes, std::vector<int64_t>* out);

// Pointwise: all of `full` is the loop nest. Row: the trailing `row_dims` dims of `full` are one
// row (they must merge for every operand), the rest are canonicalised outer dims. False when the
// operands need more than `rank` dims (or the row does not merge).
bool canonicalize(const std::vector<int64_t>& full, int row_dims, const std::vector<OperandLayout>& operands,
                  int rank, IndexSpace* out);

// The operands and the full shape with the dims in `order` (order[d] is the full dim that becomes
// dim d): a kernel iterating in that order writes its outputs in that memory order.
void permute_index_space(const std::vector<int> & order, std::vector<int64_t>& full, std::vector<OperandLayout>& operands);

// The innermost stride's class; a size-1 inner dimension is read the same by every class.
InnerStride inner_class(int64_t stride);
bool inner_compatible(InnerStride kernel, int64_t stride, int64_t inner_size);

}  // namespace tcprof
