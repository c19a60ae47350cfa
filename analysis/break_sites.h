// Graph-break sites: the one definition of "the same break" that every reader uses (report,
// explain, check, diff, the GUI). A site is (type, break id, file name, normalised source line,
// module path): never a line number, so an edit that only moves code keeps every site, and a
// changed source line is a new site. Breaks at one site are counted, not listed again.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/run_reader.h"

namespace tcprof::analysis {

std::string file_basename(std::string_view path);
// Drops a trailing # comment, trims the ends and collapses runs of white space, so re-indenting
// a line or rewording its comment keeps its site.
std::string normalise_source(std::string_view source);
// "forward (resume after /x/model.py:72)" -> "forward (resume after model.py)".
std::string normalise_frame_name(std::string_view name);

// The identity of a break site, as a string that compares equal exactly when two breaks are the
// same site. `file` may be a full path or a file name; `source` need not be normalised.
std::string site_key(std::string_view type, std::string_view break_id, std::string_view file,
                     std::string_view source, std::string_view module_path);
std::string site_key(const GraphBreakRow& b);

// The breaks at one site.
struct BreakSite {
  std::string key;
  std::string type, break_id, op, reason, hint, file, module_path, stack_json;
  std::string source;  // the line as recorded (the key uses it normalised)
  int line = 0, col = 0;  // informational: the last recorded location, not part of the key
  int64_t count = 0;      // breaks recorded at the site (one per compiled entry that ends there)
};

// Breaks grouped into sites, most frequent first (then by file and line).
std::vector<BreakSite> group_break_sites(const std::vector<GraphBreakRow>& breaks);
std::vector<BreakSite> break_sites(const RunReader& reader, Id run_id);

}  // namespace tcprof::analysis
