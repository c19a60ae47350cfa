#include "analysis/call_timing.h"

#include <algorithm>

#include "analysis/statistics.h"

namespace tcprof::analysis {

CallTiming call_timing(const std::vector<CallSample>& calls) {
  CallTiming t;
  t.calls = static_cast<int64_t>(calls.size());
  std::vector<int64_t> steady;
  double total = 0;
  for (const auto& c : calls) {
    total += static_cast<double>(c.duration_ns);
    if (!c.compiled) steady.push_back(c.duration_ns);
  }
  t.steady_calls = static_cast<int64_t>(steady.size());
  t.steady_median_ns = median(std::move(steady));
  t.mean_incl_compile_ns = calls.empty() ? 0 : total / static_cast<double>(calls.size());
  return t;
}

std::vector<CallSample> call_samples(const std::vector<CallRow>& calls, const std::vector<CompileRow>& compiles) {
  std::vector<int64_t> starts;
  for (const auto& c : compiles) starts.push_back(c.start_ns);
  std::sort(starts.begin(), starts.end());
  std::vector<CallSample> out;
  out.reserve(calls.size());
  for (const auto& c : calls) {
    auto first = std::lower_bound(starts.begin(), starts.end(), c.start_ns);
    bool compiled = first != starts.end() && *first < c.start_ns + c.duration_ns;
    out.push_back({c.duration_ns, compiled});
  }
  return out;
}

}  // namespace tcprof::analysis
