// torch.profiler's Chrome trace (Kineto) into the kernels and calls of an imported run.
//
// Times: Kineto writes `ts` in microseconds since `baseTimeNanoseconds`; absolute ns =
// baseTimeNanoseconds + ts * 1000, the epoch TORCH_TRACE uses, so both land on one timeline.
// Attribution: a GPU kernel's launch is the cuda_runtime/cuda_driver event with the same
// correlation id; the launch's enclosing CPU spans say which compiled region ("Torch-Compiled
// Region: 0/1", one `calls` row each), which graph ("## Call CompiledFxGraph <key> ##", the FX
// graph cache key) and whether it was autotuning (benchmark_all_configs: kind `autotune`).
#pragma once
#include <cstdint>
#include <string>

#include "importers/torch_trace_importer.h"

namespace tcprof::import {

struct KinetoCounts {
  int64_t kernels = 0, autotune = 0, compiled = 0, eager = 0, regions = 0, fx_keys_matched = 0;
  int64_t malformed = 0;  // events skipped: a field of the wrong JSON type
  int rank = -1;  // distributedInfo.rank when present
};

// Streams the trace twice (spans and launches first: kernels may precede them in the file), one
// event in memory at a time, and records into `target`. Throws Error(Input) when the file is not
// a Chrome trace or its gzip stream is cut short.
KinetoCounts import_kineto(const std::string& path, KinetoTarget& target);

}  // namespace tcprof::import
