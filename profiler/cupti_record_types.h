// The CUPTI activity record struct versions of the toolkit tcprof is built against. CUPTI fills
// buffers with the newest version of each record its headers declare, so these must match the
// headers (and the libcupti of the same major version) exactly.
#pragma once
#include <cupti.h>

#if !defined(CUPTI_API_VERSION)
#error "cupti.h did not define CUPTI_API_VERSION"
#elif CUPTI_API_VERSION >= 130000  // CUDA 13.x
namespace tcprof::cupti {
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using MemsetRecord = CUpti_ActivityMemset4;
using ApiRecord = CUpti_ActivityAPI;
using SyncRecord = CUpti_ActivitySynchronization2;
using OverheadRecord = CUpti_ActivityOverhead3;
using ExternalCorrelationRecord = CUpti_ActivityExternalCorrelation;
}  // namespace tcprof::cupti
#elif CUPTI_API_VERSION >= 22  // CUDA 12.4 and later 12.x (checked: Debian 13's libcupti-dev 12.4.127)
namespace tcprof::cupti {
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
using MemsetRecord = CUpti_ActivityMemset4;
using ApiRecord = CUpti_ActivityAPI;
using SyncRecord = CUpti_ActivitySynchronization;
using OverheadRecord = CUpti_ActivityOverhead3;
using ExternalCorrelationRecord = CUpti_ActivityExternalCorrelation;
}  // namespace tcprof::cupti
#else
// Older toolkits name other versions (CUDA 12.0-12.3 and 11.x): add them here after checking
// their cupti_activity.h.
#error "tcprof: this CUPTI version's activity record structs are not mapped yet (cupti_record_types.h)"
#endif
