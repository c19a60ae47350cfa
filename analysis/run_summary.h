// A run's headline figures, the same in `report`, `diff` and the GUI: the store's counts plus
// what needs a definition from this layer (break sites, call and step times).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/call_timing.h"
#include "core/run_reader.h"

namespace tcprof::analysis {

struct RunSummary {
  RunCounts counts;
  int64_t break_sites = 0;  // break_sites.h
  CallTiming call_timing;   // steady median and mean including compile (call_timing.h)
  double ms_per_call = 0;   // median over every call (the `ms_per_call` of report --json)
  double ms_per_step = 0;   // median step duration
  // Medians of each phase over the steps that recorded them (0 when none did): forward and loss,
  // backward, optimizer step. They need not add up to ms_per_step (medians of different steps).
  double ms_per_step_forward = 0, ms_per_step_backward = 0, ms_per_step_optimizer = 0;
  int64_t peak_gpu_bytes = 0;  // highest CUDA caching allocator peak in a call; 0: not a GPU run
};

RunSummary summarize_run(const RunReader& reader, Id run_id);

// The run's status as readers show it: `finished`, `running`, or for a run that stopped early
// `interrupted (process 4711 gone; last event 2026-11-24T13:50:31Z)` when the status was inferred
// from a dead process (RunRow::status_inferred), `interrupted (at ...)` when the run marked itself.
std::string status_text(const RunRow& run);

}  // namespace tcprof::analysis
