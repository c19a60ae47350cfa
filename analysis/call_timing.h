// What a call costs, as two labelled figures that `run`, `report`, `diff` and the GUI all show:
// the steady median (calls that compiled nothing: the cost once the cache is warm) and the mean
// including compile time (what the run cost per call). One number alone misleads: a 1.02 ms mean
// and a 51.7 us median can describe the same run.
#pragma once
#include <cstdint>
#include <vector>

#include "core/run_reader.h"

namespace tcprof::analysis {

struct CallSample {
  int64_t duration_ns = 0;
  bool compiled = false;  // a compile (or recompile) happened during the call
};

struct CallTiming {
  int64_t calls = 0, steady_calls = 0;
  double steady_median_ns = 0;      // over calls that compiled nothing; 0 when there were none
  double mean_incl_compile_ns = 0;  // over every call
  bool has_steady() const { return steady_calls > 0; }
};

CallTiming call_timing(const std::vector<CallSample>& calls);

// From the store: a call compiled when a compile of the run started while it ran.
std::vector<CallSample> call_samples(const std::vector<CallRow>& calls, const std::vector<CompileRow>& compiles);

}  // namespace tcprof::analysis
