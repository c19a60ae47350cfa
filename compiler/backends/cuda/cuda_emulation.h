// Generated CUDA source run on the CPU: a small emulation of what the kernels use (thread and block
// indices, shared memory, barriers, warp shuffles, the math functions), so that the CUDA backend's
// kernels are checked against eager without a GPU (tests, `fuzz_graphs --backend cuda`, a CUDA
// graph captured on a machine without one). A block's threads are fibers on the calling thread
// that run in turn from one barrier to the next; blocks run one after another. A kernel that needs
// a barrier it does not have reads stale values here too.
#pragma once
#include <string>

#include "compiler/backends/cuda/codegen_cuda.h"
#include "compiler/toolchain/kernel_library.h"

namespace tcprof {

// The header that makes a CUDA unit a C++17 translation unit.
const char* cuda_emulation_header();

// The unit for the system compiler: the header, the unit, and per kernel a host entry point
//   extern "C" void SYMBOL_emulate(const void* params, unsigned grid, unsigned block)
// that runs the kernel's grid on `block` threads with the packed params (cuda_launch.h).
std::string emulation_source(const CudaUnit& unit);

// The process's compiler for emulation units: the default kernel cache, no OpenMP (a block runs
// on the calling thread).
KernelLibraryBuilder& cuda_emulation_compiler();

}  // namespace tcprof
