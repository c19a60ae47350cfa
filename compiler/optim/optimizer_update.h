// One element's optimizer update, written once and compiled into both fused steps: the CPU's
// generated kernel (fused_optimizer.cpp) and the CUDA kernel (cuda_fused_optimizer.cpp). The
// formulas are torch::optim's (Adam with L2 weight decay, AdamW with decoupled decay, SGD with
// momentum and dampening 0), in float, so both agree with it to rounding (within an ulp or two a
// step: torch::optim's addcdiv multiplies before it divides, this divides first).
#pragma once

namespace tcprof {

// C++ source defining tc_adam_scalars, tc_adam_update and tc_sgd_update. The includer defines
// TC_OPTIM_FN first: `inline` for the CPU, `__device__ __forceinline__` for CUDA.
const char* optimizer_update_source();

}  // namespace tcprof
