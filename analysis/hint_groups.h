// Perf hints as a user reads them: a backward graph's 52 batch norms give 52 identical hints (same
// kind, op, message and source line, since the line is inside torch's functional.py), which are
// one finding. Grouped once here for the report, the problems list and the GUI alike.
#pragma once
#include <string>
#include <vector>

#include "core/run_reader.h"

namespace tcprof::analysis {

struct PerfHintGroup {
  std::string kind, op, message, file;
  int line = 0;
  int count = 0;  // identical hints
};

// Identical hints once each with their count, the most frequent first (ties in the order they were
// recorded). recompile_limit hints are kept: they say why frames ran eagerly.
std::vector<PerfHintGroup> group_perf_hints(const std::vector<PerfHintRow>& hints);

}  // namespace tcprof::analysis
