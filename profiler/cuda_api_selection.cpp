#include "profiler/cuda_api_selection.h"

// The callback id enums come through <cupti.h> (the header above): CUDA 12.4's cupti_*_cbid.h
// have no include guards, so including them again redefines their enums.

namespace tcprof {

bool api_kept_in_summary(std::string_view name) {
  // Prefixes of both APIs: cudaX (runtime) and cuX (driver).
  constexpr std::string_view kKept[] = {
      "cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch",  // work on the GPU
      "cudaMemcpy", "cuMemcpy", "cudaMemset", "cuMemset",            // copies and fills
      "cudaMalloc", "cuMemAlloc", "cudaFree", "cuMemFree", "cudaHostAlloc", "cuMemHostAlloc",
      "cudaMallocAsync", "cuMemAllocAsync", "cudaFreeAsync", "cuMemFreeAsync",
  };
  for (std::string_view prefix : kKept) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  // cudaDeviceSynchronize, cudaStreamSynchronize, cuCtxSynchronize, cudaEventSynchronize, ...
  return name.find("Synchronize") != std::string_view::npos;
}

std::vector<uint32_t> summary_api_callback_ids(const CuptiApi& api, CUpti_CallbackDomain domain) {
  const uint32_t size = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                                              : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
  std::vector<uint32_t> ids;
  for (uint32_t cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (api.get_callback_name(domain, cbid, &name) == CUPTI_SUCCESS && name && api_kept_in_summary(name)) {
      ids.push_back(cbid);
    }
  }
  return ids;
}

}  // namespace tcprof
