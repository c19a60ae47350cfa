// Which CUDA API calls a --profile summary run records. A full GPT call makes ~1,540 runtime and
// driver API calls for 120 kernels (cuDevicePrimaryCtxGetState alone 353): recording all of them
// is most of CUPTI's cost. Summary keeps what the report reads — launches (they also carry the
// correlation that attributes each kernel to its call and graph), copies and fills,
// synchronisations, allocations — and full keeps everything.
#pragma once
#include <cupti.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "profiler/cupti_loader.h"

namespace tcprof {

// By CUPTI's callback name ("cudaLaunchKernel_v7000", "cuMemcpyHtoDAsync_v2", ...).
bool api_kept_in_summary(std::string_view callback_name);

// The callback ids of `domain` (runtime or driver API) that summary keeps, found by name through
// cuptiGetCallbackName; what the collector enables one by one with cuptiActivityEnableRuntimeApi
// / cuptiActivityEnableDriverApi instead of the whole activity kind.
std::vector<uint32_t> summary_api_callback_ids(const CuptiApi& api, CUpti_CallbackDomain domain);

}  // namespace tcprof
