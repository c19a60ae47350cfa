#include "analysis/recompiles.h"

#include <unordered_map>

#include <fmt/format.h>

namespace tcprof::analysis {

std::vector<RecompileRow> attach_guard_failures(std::vector<RecompileRow> recompiles,
                                                const std::vector<GuardFailureRow>& failures,
                                                const std::vector<CompileRow>& compiles) {
  if (recompiles.empty()) return recompiles;
  std::unordered_map<Id, std::vector<size_t>> by_call;
  for (size_t i = 0; i < recompiles.size(); ++i) by_call[recompiles[i].call_id].push_back(i);
  std::unordered_map<Id, Id> frame_of_compile;
  for (const auto& c : compiles) frame_of_compile[c.id] = c.frame_id;
  for (const auto& f : failures) {
    auto it = by_call.find(f.call_id);
    if (it == by_call.end()) continue;
    auto frame = frame_of_compile.find(f.compile_id);
    for (size_t i : it->second) {
      if (frame != frame_of_compile.end() && frame->second != recompiles[i].frame_id) continue;
      recompiles[i].failures.push_back(f);
    }
  }
  return recompiles;
}

std::vector<RecompileRow> recompiles_with_failures(const RunReader& reader, Id run_id) {
  return attach_guard_failures(reader.recompiles(run_id), reader.guard_failures(run_id),
                               reader.compiles(run_id));
}

RecompileCause recompile_cause(const RecompileRow& r) {
  RecompileCause cause;
  for (const auto& f : r.failures) {
    if (f.guard_file.empty()) continue;
    cause.guard = f.guard_expr;
    cause.file = f.guard_file;
    cause.line = f.guard_line;
    break;
  }
  if (cause.guard.empty() && !r.failures.empty()) cause.guard = r.failures.front().guard_expr;
  cause.reason = cause.guard.empty() ? r.reason : fmt::format("guard {} failed: {}", cause.guard, r.reason);
  return cause;
}

}  // namespace tcprof::analysis
