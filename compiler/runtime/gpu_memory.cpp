#include "compiler/runtime/gpu_memory.h"

#if TCPROF_HAS_C10_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace tcprof {

int first_cuda_device(const std::vector<c10::IValue>& inputs) {
  for (const auto& v : inputs) {
    if (v.isTensor() && v.toTensor().defined() && v.toTensor().is_cuda()) return v.toTensor().get_device();
  }
  return -1;
}

#if TCPROF_HAS_C10_CUDA
namespace allocator = c10::cuda::CUDACachingAllocator;

// The aggregate over small and large pools is entry 0 (StatType::AGGREGATE) of each statistic
// array; the enum moved from this namespace to c10::CachingDeviceAllocator in LibTorch 2.5.
constexpr size_t kAggregate = 0;

void reset_gpu_memory_peak(int device) {
  if (device >= 0) allocator::resetPeakStats(static_cast<c10::DeviceIndex>(device));
}

int64_t gpu_memory_peak(int device) {
  if (device < 0) return 0;
  return allocator::getDeviceStats(static_cast<c10::DeviceIndex>(device)).allocated_bytes[kAggregate].peak;
}

bool gpu_memory_measured() { return true; }
#else
void reset_gpu_memory_peak(int) {}
int64_t gpu_memory_peak(int) { return 0; }
bool gpu_memory_measured() { return false; }
#endif

}  // namespace tcprof
