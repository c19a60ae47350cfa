// Ranks of one distributed job that compiled differently, like tlparse's all-ranks view: compile
// ids that some ranks have and others lack, frames whose recompile or graph-break counts differ.
// Ranks that diverge in compilation are the usual cause of collective hangs and uneven step times.
#pragma once
#include <string>
#include <vector>

#include "core/run_reader.h"

namespace tcprof::analysis {

struct RankRun {
  int rank = 0;
  Id run_id = 0;
  // What this rank's run compiled, for the per-rank table (report's divergence lines, GUI Ranks).
  std::string status;
  int64_t frames = 0, compiles = 0, recompiles = 0, graph_breaks = 0;
};

struct DivergenceItem {
  std::string kind;     // compile_on_some_ranks | recompiles_differ | graph_breaks_differ
  std::string subject;  // the compile id ("0/2") or the frame name
  std::string detail;   // "on ranks 0 only; missing on 1" / "rank 0: 2, rank 1: 1"
  std::string reason;   // why the first rank that has it compiled it (a recompile reason)
  int64_t start_ns = 0;
};

struct RankDivergence {
  std::vector<RankRun> ranks;          // one run per rank, by rank; empty when not multi-rank
  std::vector<DivergenceItem> items;   // the earliest divergence first
};

// The runs of the multi-rank import that `run_id` belongs to (same source and world size; the
// k-th session of each rank goes with the k-th of the others), compared with each other.
RankDivergence rank_divergence(const RunReader& reader, Id run_id);

// "compile", "recompiles in", "graph breaks in": how a divergence kind reads before its subject.
const char* divergence_what(const std::string& kind);

}  // namespace tcprof::analysis
