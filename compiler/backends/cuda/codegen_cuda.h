// CUDA C++ generation: one NVRTC translation unit per graph, from the same loop IR the cpp backend
// prints (lower/loop_ir.h, lower/kernel_levels.h). Every kernel becomes
//   extern "C" __global__ void NAME(const tc_params<NI, NO, R> p)
// where tc_params holds the input and output pointers, the index space's sizes and each input's
// strides in elements (the cpp backend's arguments, in one struct passed by value: cuda_launch.h
// packs it). Pointwise kernels are grid-stride loops over the flat output; row kernels give each
// block one row at a time: each reduction phase is a strided loop per thread, a warp-shuffle tree,
// then the warps' partials combined in shared memory in a fixed order (deterministic for a given
// block size). Column kernels (a sum over the leading dims: a bias's gradient) give each block 32
// columns, a warp's lanes reading one row's 32 neighbours; the block's warps take rows in turn and
// their sums meet in shared memory in warp order; where the rows are split across blocks, a second
// kernel adds the splits' sums in split order (deterministic for a given launch shape). The source compiles with NVRTC for a device and, under cuda_emulation.h, with the
// system C++ compiler for the CPU.
#pragma once
#include <string>
#include <vector>

#include "compiler/backends/cpp/lower/loop_ir.h"
#include "compiler/backends/cuda/cuda_features.h"

namespace tcprof {

// The fixed start of every CUDA unit: fixed-width types, the parameter struct, device helpers.
const char* cuda_prelude();

// One kernel's definition with `name` as its symbol.
std::string generate_cuda_kernel(const Kernel& kernel, const std::string& name, const CudaFeatures& features = {});

struct CudaKernelSymbol {
  std::string symbol;  // extern "C" name in the unit
  // A column kernel's outputs end with one more pointer: the scratch its row splits' partial sums
  // go to (doubles, `column_sums` x inner per split), null when the rows are not split.
  int inputs = 0, outputs = 0, rank = 1;
  bool row = false;
  bool column = false;
  int column_sums = 0;         // column kernels: the distinct sums it computes
  std::string finish_symbol;   // column kernels: adds the splits' partial sums, in split order
};

struct CudaUnit {
  std::string source;
  std::vector<CudaKernelSymbol> kernels;  // per program kernel, in order
  int unique_kernels = 0;                 // after de-duplicating identical bodies
};

// Window kernels, oneDNN steps and the CPU attention kernel are the cpp backend's; a program for
// CUDA has extern and kernel steps only (schedule_graph with ScheduleTarget::Cuda).
CudaUnit generate_cuda_unit(const LoopProgram& program, const CudaFeatures& features = {});

}  // namespace tcprof
