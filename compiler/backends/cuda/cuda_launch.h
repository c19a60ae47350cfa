// How a generated CUDA kernel is launched, the same on a device and in emulation: its grid and
// block from the index space, and its tc_params argument packed as the kernel reads it. No CUDA,
// no LibTorch.
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/backends/cuda/codegen_cuda.h"

namespace tcprof {

struct LaunchShape {
  unsigned grid = 1, block = 32;
  bool operator==(const LaunchShape& o) const { return grid == o.grid && block == o.block; }
};

struct LaunchLimits {
  unsigned pointwise_block = 256;  // threads per block of a pointwise kernel
  unsigned warp_row_block = 256;   // threads per block of a row kernel whose rows take a warp each
  unsigned max_row_block = 1024;   // a row kernel's block grows with the row up to this
  unsigned max_grid = 65535;       // kernels loop over the rest (grid-stride)
  // A column kernel's rows are split across blocks until each thread sums about this many.
  unsigned column_rows_per_thread = 16;
};

// `base` with TCPROF_CUDA_LAUNCH's sizes, "pointwise-block=512,warp-row-block=128" (multiples of
// 32 up to 1,024): a GPU session sweeps them (gpu-check.sh) to see what the launch shape is worth
// before anything is tuned per kernel. Neither changes a result: a pointwise element and a warp's
// row are computed the same in any block. A malformed value is a usage error.
LaunchLimits launch_limits_from_env(LaunchLimits base);

// Rows of at most this many elements are reduced by one warp each (shuffles only, no barrier, 32
// lanes a row and several rows a block); longer rows by a whole block. The generated row kernel
// makes the same choice from the same sizes (codegen_cuda.cpp).
constexpr int64_t kWarpRowMax = 1024;
// A row of at most kRowCacheSlots elements a thread (a warp's row of kRowCacheMax, a 1,024-thread
// block's of 16,384) keeps what its loops compute again in registers (codegen_cuda.cpp): a layer
// norm reads its row once, not three times, and a softmax over a vocabulary once, not twice.
constexpr int64_t kRowCacheSlots = 16;
constexpr int64_t kRowCacheMax = 32 * kRowCacheSlots;
// Elements a pointwise kernel's thread takes per step: one 4-element vector where the operands are
// laid out and aligned for it, else 4 elements a grid-stride apart (codegen_cuda.cpp).
constexpr int64_t kPointwiseUnroll = 4;

// A column kernel's blocks: 32 columns each, and its rows split across at most this many blocks in
// all (about 8 blocks of 256 threads for each SM of an H200), the splits' partial sums then added in
// split order by its finish kernel (codegen_cuda.cpp).
constexpr int64_t kColumnMaxBlocks = 1024;

// Pointwise: enough blocks for one element per thread, up to max_grid. Row: a warp per row, 8 rows
// a block, for rows up to kWarpRowMax; else one block per row up to max_grid, threads a power of
// two from 32 up to the row length (capped). Column: a block of 32 columns and up to warp_row_block /
// 32 groups of rows (max_row_block caps it), the grid the column tiles times the splits of the rows.
LaunchShape launch_shape(const CudaKernelSymbol& kernel, const int64_t* sizes, const LaunchLimits& limits);

// How many blocks a column kernel's rows are split across in `shape` (1: its blocks write the sums
// themselves, no scratch, no finish). The kernel derives the same number from its grid.
int64_t column_splits(const CudaKernelSymbol& kernel, const int64_t* sizes, const LaunchShape& shape);

// The bytes of tc_params<max(inputs,1), max(outputs,1), rank>: pointers, sizes, strides (one row of
// `rank` per input), 8 bytes each. Null when it is larger than a kernel argument may be (4 KiB).
std::vector<uint64_t> pack_params(const CudaKernelSymbol& kernel, const void* const* in, void* const* out,
                                  const int64_t* sizes, const int64_t* strides);

}  // namespace tcprof
