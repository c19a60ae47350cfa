// C++ code generation: one translation unit per graph. Every kernel becomes an `extern "C"`
// function
//   void NAME(const void* const* in, void* const* out, const int64_t* sizes, const int64_t* strides)
// whose outer loops are OpenMP-parallel and whose innermost loop is an `omp simd` loop the
// compiler vectorises for the running CPU. Sizes and strides (in elements; 0 for broadcast
// dimensions) are arguments, so dynamic dimensions need no recompilation. Identical kernels
// (repeated blocks) are emitted once: their name is a hash of their body.
#pragma once
#include <string>
#include <vector>

#include "compiler/backends/cpp/lower/loop_ir.h"

namespace tcprof {

const char* codegen_prelude();

// The body of one kernel with `name` as its function name.
std::string generate_kernel(const Kernel& kernel, const std::string& name);
std::string generate_window_kernel(const WindowKernel& kernel, const std::string& name);
std::string generate_attention_kernel(const WindowKernel& kernel, const std::string& name);
std::string generate_linear_epilogue(const WindowKernel& kernel, const std::string& name);

struct GeneratedUnit {
  std::string source;
  std::vector<std::string> kernel_symbols;  // per program kernel, in order
  std::vector<std::string> window_symbols;  // per native kernel
  int unique_kernels = 0;                   // after de-duplicating identical bodies
};

GeneratedUnit generate_unit(const LoopProgram& program);

}  // namespace tcprof
