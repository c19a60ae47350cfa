// Everything the views show about one run, read in one go on a worker thread (DbLoader) and then
// shared read-only with the UI thread. Views never touch SQLite themselves, and every figure that
// the CLI shows too comes from analysis/, computed the same way.
#pragma once
#include <QString>
#include <memory>
#include <vector>

#include "analysis/break_sites.h"
#include "analysis/compile_time.h"
#include "analysis/gpu_graph_time.h"
#include "analysis/kernel_stats.h"
#include "analysis/problems.h"
#include "analysis/rank_divergence.h"
#include "analysis/run_summary.h"
#include "analysis/run_view.h"
#include "analysis/source_index.h"
#include "core/run_reader.h"
#include "gui/kernel_data.h"

namespace tcprof::gui {

struct RunData {
  QString path;  // the database file
  RunRow run;
  analysis::RunSummary summary;
  TimeRange time_range;
  std::vector<FrameRow> frames;
  std::vector<CompileRow> compiles;
  std::vector<CompilePhaseRow> phases;
  std::vector<GraphRow> graphs;
  analysis::CompileTimeReport compile_time;  // by stage, caches, what repeats (the Compile time view)
  std::vector<GuardRow> guards;
  std::vector<analysis::BreakSite> break_sites;
  std::vector<RecompileRow> recompiles;  // with the guard failures that forced each
  std::vector<GuardFailureRow> guard_failures;
  std::vector<CallRow> calls;
  // calls[i].input_shapes parsed (sizes per input), done on the loading thread: a run with
  // 100k calls would otherwise parse JSON on the UI thread.
  std::vector<std::vector<std::vector<int64_t>>> call_shapes;
  std::vector<StepRow> steps;
  std::vector<PerfHintRow> perf_hints;
  analysis::SourceIndex sources;  // the user's files as the run recorded them (none before schema 3)
  KernelData kernels;
  std::vector<analysis::KernelStats> kernel_summary;  // over the whole run
  std::vector<analysis::Problem> problems;  // the overview's "Biggest problems", as `report` ranks them
  analysis::GpuCallCoverage gpu_calls;  // calls whose GPU work was recorded (a sampling summary)
  // For comparing runs (analysis/run_comparison.h).
  analysis::RunView view;
  std::vector<GraphKernelTime> graph_times;
  // The other ranks of a multi-rank import and where they compiled differently (empty ranks
  // for a single-process run): the rank selector and the Ranks view.
  analysis::RankDivergence ranks;

  // "model.pt · run 3 (train)" for titles and run lists.
  QString title() const;
  const CompileRow* compile(Id id) const;
  const FrameRow* frame(Id id) const;
};

using RunDataPtr = std::shared_ptr<const RunData>;

// Reads a whole run. `stage(text, fraction)` reports progress (fraction in 0..1); may be empty.
// Throws tcprof::Error like RunReader.
RunDataPtr load_run_data(const QString& path, Id run_id,
                         const std::function<void(const QString&, double)>& stage = {});

}  // namespace tcprof::gui
