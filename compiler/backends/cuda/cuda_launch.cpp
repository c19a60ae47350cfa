#include "compiler/backends/cuda/cuda_launch.h"

#include <algorithm>
#include <cstring>

namespace tcprof {

LaunchShape launch_shape(const CudaKernelSymbol& kernel, const int64_t* sizes, const LaunchLimits& limits) {
  LaunchShape shape;
  const int R = kernel.rank;
  if (kernel.row) {
    int64_t outer = 1;
    for (int d = 0; d + 1 < R; ++d) outer *= sizes[d];
    const int64_t inner = sizes[R - 1];
    if (inner <= kWarpRowMax) {
      shape.block = std::max(32u, std::min(kWarpRowBlock, limits.max_row_block) / 32 * 32);
      const int64_t rows_per_block = shape.block / 32;
      shape.grid = static_cast<unsigned>(std::clamp<int64_t>((outer + rows_per_block - 1) / rows_per_block, 1, limits.max_grid));
      return shape;
    }
    unsigned block = 32;
    while (block < limits.max_row_block && static_cast<int64_t>(block) < inner) block *= 2;
    shape.block = std::min(block, std::max(32u, limits.max_row_block / 32 * 32));
    shape.grid = static_cast<unsigned>(std::clamp<int64_t>(outer, 1, limits.max_grid));
    return shape;
  }
  int64_t total = 1;
  for (int d = 0; d < R; ++d) total *= sizes[d];
  shape.block = std::max(32u, limits.pointwise_block / 32 * 32);
  const int64_t per_block = static_cast<int64_t>(shape.block) * kPointwiseUnroll;
  const int64_t blocks = (total + per_block - 1) / per_block;
  shape.grid = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, limits.max_grid));
  return shape;
}

std::vector<uint64_t> pack_params(const CudaKernelSymbol& kernel, const void* const* in, void* const* out,
                                  const int64_t* sizes, const int64_t* strides) {
  const size_t NI = static_cast<size_t>(std::max(kernel.inputs, 1)), NO = static_cast<size_t>(std::max(kernel.outputs, 1));
  const size_t R = static_cast<size_t>(kernel.rank);
  const size_t words = NI + NO + R + NI * R;
  if (words * 8 > 4096) return {};
  std::vector<uint64_t> p(words, 0);
  auto put_ptr = [&](size_t at, const void* ptr) {
    uint64_t v = 0;
    std::memcpy(&v, &ptr, sizeof ptr);
    p[at] = v;
  };
  for (size_t i = 0; i < static_cast<size_t>(kernel.inputs); ++i) put_ptr(i, in[i]);
  for (size_t o = 0; o < static_cast<size_t>(kernel.outputs); ++o) put_ptr(NI + o, out[o]);
  for (size_t d = 0; d < R; ++d) p[NI + NO + d] = static_cast<uint64_t>(sizes[d]);
  for (size_t i = 0; i < static_cast<size_t>(kernel.inputs) * R; ++i) p[NI + NO + R + i] = static_cast<uint64_t>(strides[i]);
  return p;
}

}  // namespace tcprof
