// Chrome Trace Event Format export of recorded runs (opens in Perfetto and chrome://tracing).
// Reads only through tcprof::RunReader.
//
// Layout: one process per run. Host tracks: "main" (steps, calls, graph slices derived from each
// call's kernels, and CPU kernels of thread 0), one per other CPU thread index, one per host
// thread that made CUDA API calls, and "compiler" (compiles with their phases, recompiles as
// instant events). GPU tracks: one per device and stream. Flow arrows go from a CUDA API call to
// the GPU work it launched (same correlation id). Timestamps are microseconds from the start of
// the earliest event exported; slices on one track are properly nested (a child overrunning its
// parent by timer jitter is clipped to the parent and marked with args.clipped). Calls recorded
// with --profile summary have no launches to draw: their kernel aggregates are in
// args.kernel_summary.
#pragma once
#include <ostream>
#include <vector>

#include "core/run_reader.h"

namespace tcprof {

struct ChromeTraceStats {
  size_t events = 0, slices = 0, flows = 0, tracks = 0;
};

ChromeTraceStats write_chrome_trace(const RunReader& reader, const std::vector<Id>& run_ids,
                                    std::ostream& out);

}  // namespace tcprof
