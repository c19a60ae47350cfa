// The CI gate's verdict: a run compared with a baseline and/or absolute limits. A new break site,
// more breaks at a site, more recompiles or more eager fallbacks are regressions; fewer are
// improvements; everything else passes. `tcprof check` prints it in four formats.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/baseline.h"
#include "analysis/run_view.h"
#include "analysis/source_index.h"

namespace tcprof::analysis {

struct GateLimits {
  std::optional<int64_t> max_graph_breaks, max_recompiles;
  // A budget per frame: a frame whose compiles together took longer is a regression.
  std::optional<double> max_compile_seconds;
};

struct Finding {
  std::string kind;   // new_graph_break, more_graph_breaks, fewer_graph_breaks, removed_graph_break,
                      // more_recompiles, fewer_recompiles, more_eager_fallbacks,
                      // fewer_eager_fallbacks, max_graph_breaks, max_recompiles,
                      // max_compile_time (baseline/current in ms)
  bool regression = false;
  std::string frame;  // frame key; empty for run-wide limits
  std::string title;  // "new graph break TCB0001 side_effect"
  std::string file;   // as recorded (full path) for the run's sites, a file name for the baseline's
  int line = 0;
  std::string source, reason, hint;
  int64_t baseline = 0, current = 0;
  std::string unit;  // of baseline and current: empty for counts, "ms" for compile time
};

struct GateFrame {
  std::string key;
  bool in_baseline = false, in_run = false;
  int64_t graphs = 0, breaks = 0, recompiles = 0, eager_fallbacks = 0;                  // run
  int64_t base_graphs = 0, base_breaks = 0, base_recompiles = 0, base_eager_fallbacks = 0;  // baseline
};

struct GateResult {
  std::vector<Finding> findings;  // regressions first, then improvements
  std::vector<GateFrame> frames;  // the run's frames in order, then frames only the baseline had
  bool has_baseline = false;
  int64_t regressions() const;
  int64_t improvements() const;
  std::string verdict() const;  // "regression", "improved" or "pass"
};

// `sources` gives the user's line at a failed guard (guards record no source text).
GateResult evaluate_gate(const RunView& run, const Baseline* baseline, const GateLimits& limits,
                         const SourceIndex& sources = {});

}  // namespace tcprof::analysis
