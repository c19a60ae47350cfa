#include "compiler/backends/cuda/cuda_launch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "core/error.h"

namespace tcprof {

LaunchShape launch_shape(const CudaKernelSymbol& kernel, const int64_t* sizes, const LaunchLimits& limits) {
  LaunchShape shape;
  const int R = kernel.rank;
  if (kernel.column) {
    int64_t outer = 1;
    for (int d = 0; d + 1 < R; ++d) outer *= sizes[d];
    const int64_t tiles = std::max<int64_t>(1, (sizes[R - 1] + 31) / 32);
    const int64_t groups = std::clamp<int64_t>(outer, 1, std::max(32u, std::min(limits.warp_row_block, limits.max_row_block)) / 32);
    shape.block = static_cast<unsigned>(groups * 32);
    const int64_t rows_per_split = groups * std::max(1u, limits.column_rows_per_thread);
    const int64_t room = std::min<int64_t>(kColumnMaxBlocks, limits.max_grid) / tiles;  // splits the grid has room for
    const int64_t splits = std::clamp<int64_t>((outer + rows_per_split - 1) / rows_per_split, 1, std::max<int64_t>(1, room));
    shape.grid = static_cast<unsigned>(splits > 1 ? tiles * splits : std::min<int64_t>(tiles, limits.max_grid));
    return shape;
  }
  if (kernel.row) {
    int64_t outer = 1;
    for (int d = 0; d + 1 < R; ++d) outer *= sizes[d];
    const int64_t inner = sizes[R - 1];
    if (inner <= kWarpRowMax) {
      shape.block = std::max(32u, std::min(limits.warp_row_block, limits.max_row_block) / 32 * 32);
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

int64_t column_splits(const CudaKernelSymbol& kernel, const int64_t* sizes, const LaunchShape& shape) {
  const int64_t tiles = (sizes[kernel.rank - 1] + 31) / 32;
  return tiles > 0 && shape.grid > tiles ? shape.grid / tiles : 1;
}

LaunchLimits launch_limits_from_env(LaunchLimits base) {
  const char* env = std::getenv("TCPROF_CUDA_LAUNCH");
  if (!env) return base;
  std::istringstream items(env);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    unsigned* field = name == "pointwise-block" ? &base.pointwise_block : name == "warp-row-block" ? &base.warp_row_block : nullptr;
    char* end = nullptr;
    const long value = eq == std::string::npos ? 0 : std::strtol(item.c_str() + eq + 1, &end, 10);
    if (!field || eq == std::string::npos || *end != '\0' || value < 32 || value > 1024 || value % 32 != 0) {
      throw Error(ErrorKind::Usage, fmt::format("TCPROF_CUDA_LAUNCH: '{}' is not NAME=THREADS with NAME pointwise-block or "
                                                "warp-row-block and THREADS a multiple of 32 from 32 to 1024", item));
    }
    *field = static_cast<unsigned>(value);
  }
  return base;
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
