#include "analysis/run_summary.h"

#include <algorithm>

#include "analysis/break_sites.h"

namespace tcprof::analysis {

double median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid), v.end());
  double upper = static_cast<double>(v[mid]);
  if (v.size() % 2 == 1) return upper;
  double lower = static_cast<double>(*std::max_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid)));
  return (lower + upper) / 2;
}

RunSummary summarize_run(const RunReader& reader, Id run_id) {
  RunSummary s;
  s.counts = reader.counts(run_id);
  s.break_sites = static_cast<int64_t>(break_sites(reader, run_id).size());
  std::vector<CallRow> call_rows = reader.calls(run_id);
  s.call_timing = call_timing(call_samples(call_rows, reader.compiles(run_id)));
  std::vector<int64_t> calls, steps;
  for (const auto& c : call_rows) calls.push_back(c.duration_ns);
  for (const auto& st : reader.steps(run_id)) steps.push_back(st.duration_ns);
  s.ms_per_call = median(std::move(calls)) / 1e6;
  s.ms_per_step = median(std::move(steps)) / 1e6;
  return s;
}

}  // namespace tcprof::analysis
