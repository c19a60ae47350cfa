// Recompile explanations: each recompile with the guard failures that forced it, and the place in
// the user's code it comes from (the first failed guard that points at user code).
#pragma once
#include <string>
#include <vector>

#include "core/run_reader.h"

namespace tcprof::analysis {

// A call can recompile several frames (the root and resume frames after breaks): each recompile
// gets the failures of its own frame's entries recorded on the call that forced it.
std::vector<RecompileRow> attach_guard_failures(std::vector<RecompileRow> recompiles,
                                                const std::vector<GuardFailureRow>& failures,
                                                const std::vector<CompileRow>& compiles);
std::vector<RecompileRow> recompiles_with_failures(const RunReader& reader, Id run_id);

struct RecompileCause {
  std::string guard;   // the failed guard's expression; empty when none was recorded
  std::string file;    // where the guard was created; empty when not in user code
  int line = 0;
  std::string reason;  // "guard x.size(0) == 8 failed: tensor 'x' size mismatch ..."
};
RecompileCause recompile_cause(const RecompileRow& recompile);

}  // namespace tcprof::analysis
