// Peak GPU memory per call: the CUDA caching allocator's peak, reset when a call starts and read
// when it ends. Builds whose LibTorch has no CUDA (Debian 12's, CI) measure nothing and say 0.
#pragma once
#include <cstdint>
#include <vector>

#include <ATen/core/ivalue.h>

namespace tcprof {

// The device of the first CUDA tensor among `inputs`, or -1 when none is on a GPU.
int first_cuda_device(const std::vector<c10::IValue>& inputs);

void reset_gpu_memory_peak(int device);
// Bytes allocated at the peak since the last reset; 0 where not measurable.
int64_t gpu_memory_peak(int device);

// Whether this build reads the allocator's statistics (a CUDA LibTorch).
bool gpu_memory_measured();

}  // namespace tcprof
