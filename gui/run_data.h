// Everything the views show about one run, read in one go on a worker thread (DbLoader) and then
// shared read-only with the UI thread. Views never touch SQLite themselves.
#pragma once
#include <QString>
#include <memory>
#include <vector>

#include "core/run_reader.h"
#include "gui/kernel_data.h"
#include "gui/model_archive.h"

namespace tcprof::gui {

struct RunData {
  QString path;  // the database file
  RunRow run;
  RunSummary summary;
  TimeRange time_range;
  std::vector<FrameRow> frames;
  std::vector<CompileRow> compiles;
  std::vector<CompilePhaseRow> phases;
  std::vector<GraphRow> graphs;
  std::vector<GuardRow> guards;
  std::vector<BreakSite> break_sites;
  std::vector<RecompileRow> recompiles;
  std::vector<GuardFailureRow> guard_failures;
  std::vector<CallRow> calls;
  // calls[i].input_shapes parsed (sizes per input), done on the loading thread: a run with
  // 100k calls would otherwise parse JSON on the UI thread.
  std::vector<std::vector<std::vector<int64_t>>> call_shapes;
  std::vector<StepRow> steps;
  std::vector<PerfHintRow> perf_hints;
  // The model archive's recorded source text, when the model file is readable here (else null).
  std::shared_ptr<const ModelArchive> archive;
  KernelData kernels;
  std::vector<KernelAggregate> kernel_summary;  // over the whole run

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
