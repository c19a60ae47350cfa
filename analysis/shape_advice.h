// Shape advice: from the input shapes of the recorded calls and the recompiles they caused, what
// to do about each input dimension whose size varies. Either mark it dynamic (one graph for every
// size) or pad it to a multiple of M so that at most K <= recompile-limit static graphs cover the
// observed range (keeping static-shape optimisations), with the padding cost in extra elements.
// Also flags graphs specialised on alignment (a guard like `s0 % 8 == 0`).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>


#include "core/run_reader.h"

namespace tcprof::analysis {

struct SizeSeen {
  int64_t size = 0, calls = 0, recompiles = 0;  // recompiles on calls where this size was new
};

struct PadPlan {
  int64_t multiple = 0;
  int64_t graphs = 0;              // static graphs that cover the padded range
  int64_t padded_lo = 0, padded_hi = 0;
  double extra_percent = 0;        // extra elements of this input over the recorded calls
};

// A decision on a size (`if x.size(0) > 4:`) whose guard failed: each outcome is its own graph,
// so marking the dimension dynamic cannot remove these recompiles.
struct ShapeDecision {
  std::string expr, file;  // the condition without a leading `not`
  int line = 0;
  int64_t recompiles = 0;
};

struct DimAdvice {
  int input = 0, dim = 0;
  std::vector<SizeSeen> sizes;  // by size
  int64_t recompiles = 0;
  // What the failed guards say caused them: size guards (what --dynamic and padding remove) and
  // shape decisions (what they cannot).
  int64_t size_guard_recompiles = 0;
  std::vector<ShapeDecision> decisions;
  std::optional<PadPlan> pad;   // none when no multiple keeps the graphs within the limit
  std::string recommendation;   // "pad", "dynamic", or "branch" (only decisions recompiled)
  std::string dynamic_flag;     // "--dynamic 0:1"
};

// A shape decision on divisibility (`if x.size(1) % 8 == 0:`): both outcomes guard the same
// source line, so they are one flag with the graphs on either side.
struct AlignmentGuard {
  std::string expr, file;  // the condition without a leading `not`
  int line = 0;
  int64_t multiple = 0;
  int64_t graphs = 0;    // compiled graphs guarded on it
  int64_t failures = 0;  // guard checks that failed on it (each one a recompile or fallback)
};

struct ShapeAdvice {
  int recompile_limit = 8;
  int64_t calls = 0;
  std::vector<DimAdvice> dims;  // only dimensions whose size varied
  std::vector<AlignmentGuard> alignment;
  int64_t unattributed_recompiles = 0;
  bool empty() const { return dims.empty() && alignment.empty(); }
};

// Pure: unit tests feed it rows directly.
ShapeAdvice compute_shape_advice(const std::vector<CallRow>& calls, const std::vector<RecompileRow>& recompiles,
                                 const std::vector<GuardRow>& guards,
                                 const std::vector<GuardFailureRow>& failures, int recompile_limit);
// Reads the run's rows (recompiles with their guard failures) and its recompile limit
// (runs.config_json).
ShapeAdvice shape_advice(const RunReader& reader, Id run_id);

// The smallest-cost multiple whose static graphs fit in `max_graphs`; nullopt when none does.
std::optional<PadPlan> plan_padding(const std::vector<SizeSeen>& sizes, int64_t max_graphs);

}  // namespace tcprof::analysis
