// What changed between two runs: the computation behind `tcprof diff` and the GUI's Compare view
// (one computation shown two ways). Break sites are matched by their key (break_sites.h: a moved
// line is the same site, a changed line is a new one) across the whole run, frames by their
// normalised names, graphs by compile id ("0/1") and kernels by name and device; compile time is
// compared by stage and per frame.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/compile_time.h"
#include "analysis/gpu_graph_time.h"
#include "analysis/kernel_stats.h"
#include "analysis/run_summary.h"
#include "analysis/run_view.h"

namespace tcprof::analysis {

// One side of a comparison: what is read of a run to compare it.
struct ComparedRun {
  RunView view;
  RunSummary summary;
  std::vector<KernelStats> kernels;
  std::vector<GraphKernelTime> graph_times;
  CompileTimeReport compile_time;  // without repeated graphs (RepeatedGraphs::Skip suffices)
  GpuCallCoverage gpu_calls;       // a sampling summary's GPU rows cover some calls only
};
ComparedRun compared_run(const RunReader& reader, Id run_id);

struct SiteChange {
  enum class Kind { Added, Removed, Changed, Unchanged };
  Kind kind = Kind::Unchanged;
  BreakSite site;     // as recorded in B when the site is there, else as in A
  std::string frame;  // the frame key of the site's first breaks
  int64_t a = 0, b = 0;  // breaks at the site in A and B
};

struct FrameChange {
  std::string key;
  int64_t a_recompiles = 0, b_recompiles = 0, a_failures = 0, b_failures = 0;
};

struct TimeDelta {
  std::string name;
  int64_t a_ns = 0, b_ns = 0, a_count = 0, b_count = 0;
  int64_t delta() const { return b_ns - a_ns; }
};

struct RunComparison {
  std::vector<SiteChange> sites;    // added, removed, changed, unchanged; each in order of appearance
  std::vector<FrameChange> frames;  // A's frames in order, then frames only B has
  std::vector<TimeDelta> graphs;    // kernel time per graph, largest absolute change first
  std::vector<TimeDelta> kernels;   // time per kernel, largest absolute change first
  // Compile time (compile_time.h) by stage, in stage order, and per frame key (counts are
  // compiles), largest absolute change first; the compile caches' hits and misses on each side.
  std::vector<TimeDelta> compile_stages;
  std::vector<TimeDelta> compile_frames;
  CacheCounts a_cache, b_cache;
  // Non-empty when the two runs' GPU rows cover different shares of their calls (a sampling
  // summary beside a full run): their kernel totals do not compare. diff and the GUI print it.
  std::string kernel_caveat;
  std::vector<const SiteChange*> of_kind(SiteChange::Kind kind) const;
  int64_t count(SiteChange::Kind kind) const;
};

RunComparison compare_runs(const ComparedRun& a, const ComparedRun& b);

}  // namespace tcprof::analysis
