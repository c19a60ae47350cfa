// Parts of the cuda backend that can be turned off one by one, so that a GPU run measures what
// each is worth in the same session (scripts/gpu-check.sh runs the GPT with and without them):
// TCPROF_CUDA_OFF=vectors,row-registers,linear-epilogues,optimizer-kernel,launch-tuning. Everything is on by
// default; results do not depend on them beyond floating-point rounding.
#pragma once

namespace tcprof {

struct CudaFeatures {
  bool vectors = true;           // pointwise kernels' 4-element vector loads and stores
  bool row_registers = true;     // a row's shared values kept in registers (up to 16 elements a thread)
  bool linear_epilogues = true;  // a linear's ReLU or tanh-GELU as cuBLASLt's epilogue
  bool optimizer_kernel = true;  // a GPU's optimizer step as tcprof's kernel (else LibTorch's fused ones)
  bool launch_tuning = true;     // each kernel's block size raced on the device (launch_tuning.h)
};

// From TCPROF_CUDA_OFF; an unknown name is a usage error naming the known ones.
CudaFeatures cuda_features_from_env();

}  // namespace tcprof
