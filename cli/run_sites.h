// A recorded run seen as frames and graph-break sites, keyed so that the keys survive edits that
// only move code: a site is (break id, type, op, file name, normalised source, module path), never
// a line number, and frame names lose their "file.py:72" line. The CI gate (baseline.h, gate.h)
// and `tcprof diff` compare runs through these keys.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/run_reader.h"

namespace tcprof::cli {

std::string file_basename(std::string_view path);
// Drops a trailing # comment, trims the ends and collapses runs of white space, so re-indenting
// a line or rewording its comment keeps its site.
std::string normalise_source(std::string_view source);
// "forward (resume after /x/model.py:72)" -> "forward (resume after model.py)".
std::string normalise_frame_name(std::string_view name);

// One break site within one frame.
struct SiteBreaks {
  std::string key;  // type|id|op|file name|source|module path
  std::string type, break_id, op, file, source, module_path, reason, hint;
  int line = 0;       // informational: the last recorded line, not part of the key
  int64_t count = 0;  // graph_breaks rows at the site (one per compiled entry that ends there)
};

std::string site_key(std::string_view type, std::string_view break_id, std::string_view op,
                     std::string_view file, std::string_view source, std::string_view module_path);

struct FrameView {
  Id id = 0;
  std::string key;  // normalised name, module path, and "#2" for a repeated name
  std::string name, module_path, file;
  int line = 0;
  int64_t graphs = 0, recompiles = 0, guard_failures = 0;
  // Calls that ran eagerly. The runtime records calls on the root frame only, so a fallback in
  // any frame is counted on the root frame.
  int64_t eager_fallbacks = 0;
  std::vector<SiteBreaks> breaks;
  std::vector<RecompileRow> recompile_rows;  // for the guard and reason of a recompile finding
  int64_t break_count() const;
};

struct RunView {
  Id run_id = 0;
  RunRow run;
  std::vector<FrameView> frames;  // in creation order
  std::vector<PerfHintRow> limit_hints;  // recompile_limit hits: why frames ran eagerly
};

RunView view_run(const RunReader& reader, Id run_id);

// The run to read: `requested` when given (Error(Usage) if absent), else the newest run.
// Error(Input) when the file has no runs.
Id resolve_run(const RunReader& reader, std::optional<Id> requested);

}  // namespace tcprof::cli
