// A run's biggest problems in plain words, ranked by a rough cost estimate, each naming the view
// that shows it: the GUI's overview and `tcprof report` (text and JSON) print this one list.
// Kernel problems rank GPU work (kernels, copies, fills) in a CUDA run and host kernels otherwise;
// a CUDA API call is never a kernel problem. A run whose host spends much of each call in CUDA
// API calls while the GPU idles gets a launch-bound problem of its own.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/break_sites.h"
#include "analysis/kernel_stats.h"
#include "analysis/run_summary.h"
#include "core/run_reader.h"

namespace tcprof::analysis {

struct Problem {
  double score = 0;  // higher = worse
  std::string kind;  // graph_breaks, recompiles, eager_calls, compile_time, launch_bound, slowest_kernel, perf_hint
  std::string title;   // one short line
  std::string detail;  // one or two sentences
  std::string view;    // the GUI view that shows it: breaks, recompiles, kernels, graphs
};

// The steady calls (those that compiled nothing) of a CUDA run: how long they took, how much of
// that the host spent in CUDA API calls and how long the GPU was busy.
struct LaunchPressure {
  int64_t calls = 0, call_ns = 0;
  // Runtime API time, or driver API time where that is larger: a runtime call's own driver calls
  // run inside it, so the two are not added.
  int64_t api_ns = 0;
  int64_t gpu_ns = 0;  // kernels, copies and fills
  double api_share() const { return call_ns > 0 ? static_cast<double>(api_ns) / static_cast<double>(call_ns) : 0; }
  double gpu_share() const { return call_ns > 0 ? static_cast<double>(gpu_ns) / static_cast<double>(call_ns) : 0; }
  // The host spends at least a quarter of the call in CUDA API calls and the GPU idles for at
  // least a quarter of it.
  bool launch_bound() const { return calls > 0 && api_share() >= 0.25 && gpu_share() < 0.75; }
};

LaunchPressure launch_pressure(const std::vector<CallRow>& calls, const std::vector<CompileRow>& compiles,
                               const std::vector<CallKindTime>& times);

// What the ranking reads; a reader that has these loaded already (the GUI) passes them in.
struct ProblemInputs {
  const RunSummary& summary;
  const std::vector<BreakSite>& break_sites;
  const std::vector<RecompileRow>& recompiles;  // with their guard failures (recompiles.h)
  TimeRange time_range;
  const std::vector<KernelStats>& kernel_stats;  // the whole run, every place
  const std::vector<PerfHintRow>& perf_hints;
  LaunchPressure launch;
};

std::vector<Problem> find_problems(const ProblemInputs& in, size_t limit = 3);
std::vector<Problem> find_problems(const RunReader& reader, Id run_id, size_t limit = 3);

}  // namespace tcprof::analysis
