// A recorded run seen as its frames, each with its graphs, recompiles, eager fallbacks and break
// sites (break_sites.h). Frame keys survive edits that only move code: names lose their
// "file.py:72" line. The CI gate (gate.h, baseline.h) and run comparison read runs through this.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/break_sites.h"
#include "core/run_reader.h"

namespace tcprof::analysis {

struct FrameView {
  Id id = 0;
  std::string key;  // normalised name, module path, and "#2" for a repeated name
  std::string name, module_path, file;
  int line = 0;
  int64_t graphs = 0, recompiles = 0, guard_failures = 0;
  // Calls that ran eagerly. The runtime records calls on the root frame only, so a fallback in
  // any frame is counted on the root frame.
  int64_t eager_fallbacks = 0;
  int64_t compile_ns = 0;  // the frame's compiles together, as compile_time.h counts them
  std::vector<BreakSite> breaks;             // the sites of breaks that ended this frame's graphs
  std::vector<RecompileRow> recompile_rows;  // with their guard failures (recompiles.h)
  int64_t break_count() const;
};

struct RunView {
  Id run_id = 0;
  RunRow run;
  std::vector<FrameView> frames;         // in creation order
  std::vector<PerfHintRow> limit_hints;  // recompile_limit hits: why frames ran eagerly
};

RunView view_run(const RunReader& reader, Id run_id);

// The run to read: `requested` when given (Error(Usage) if absent), else the newest run.
// Error(Input) when the file has no runs.
Id resolve_run(const RunReader& reader, std::optional<Id> requested);

}  // namespace tcprof::analysis
