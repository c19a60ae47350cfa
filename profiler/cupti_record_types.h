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
#else
// Older toolkits name other versions (CUDA 12: CUpti_ActivityKernel9, Memcpy5, ...). They were not
// available to check on the build machines: add them here after checking cupti_activity.h.
#error "tcprof: this CUPTI version's activity record structs are not mapped yet (cupti_record_types.h)"
#endif
