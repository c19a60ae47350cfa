#include "analysis/run_summary.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/break_sites.h"
#include "analysis/compile_time.h"
#include "analysis/gpu_graph_time.h"
#include "analysis/statistics.h"

namespace tcprof::analysis {

RunSummary summarize_run(const RunReader& reader, Id run_id) {
  RunSummary s;
  s.counts = reader.counts(run_id);
  // Compile time has one definition, compile_time.h's (a compile's span and its phases, a lazy
  // backward included), in the summary line, the overview, diff and the gate alike.
  s.counts.compile_time_ns = compile_time(reader, run_id, RepeatedGraphs::Skip).total_ns;
  s.break_sites = static_cast<int64_t>(break_sites(reader, run_id).size());
  std::vector<CallRow> call_rows = reader.calls(run_id);
  s.call_timing = call_timing(call_samples(call_rows, reader.compiles(run_id)));
  s.peak_gpu_bytes = peak_gpu_bytes(call_rows);
  std::vector<int64_t> calls, steps, forward, backward, optimizer;
  for (const auto& c : call_rows) calls.push_back(c.duration_ns);
  for (const auto& st : reader.steps(run_id)) {
    steps.push_back(st.duration_ns);
    if (st.forward_ns > 0) forward.push_back(st.forward_ns);
    if (st.backward_ns > 0) backward.push_back(st.backward_ns);
    if (st.optimizer_ns > 0) optimizer.push_back(st.optimizer_ns);
  }
  s.ms_per_call = median(std::move(calls)) / 1e6;
  s.ms_per_step = median(std::move(steps)) / 1e6;
  s.ms_per_step_forward = median(std::move(forward)) / 1e6;
  s.ms_per_step_backward = median(std::move(backward)) / 1e6;
  s.ms_per_step_optimizer = median(std::move(optimizer)) / 1e6;
  return s;
}

std::string status_text(const RunRow& run) {
  if (run.status != "interrupted") return run.status;
  if (run.status_inferred) {
    return fmt::format("interrupted (process {} gone; last event {})", run.pid,
                       run.last_event_at.empty() ? "not recorded" : run.last_event_at);
  }
  return run.finished_at.empty() ? run.status : fmt::format("interrupted (at {})", run.finished_at);
}

}  // namespace tcprof::analysis
