#include "analysis/hint_groups.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace tcprof::analysis {

std::vector<PerfHintGroup> group_perf_hints(const std::vector<PerfHintRow>& hints) {
  std::vector<PerfHintGroup> groups;
  std::map<std::tuple<std::string, std::string, std::string, std::string, int>, size_t> index;
  for (const PerfHintRow& h : hints) {
    auto [it, fresh] = index.try_emplace(std::make_tuple(h.kind, h.op, h.message, h.file, h.line), groups.size());
    if (fresh) groups.push_back({h.kind, h.op, h.message, h.file, h.line, 0});
    ++groups[it->second].count;
  }
  std::stable_sort(groups.begin(), groups.end(), [](const PerfHintGroup& a, const PerfHintGroup& b) { return a.count > b.count; });
  return groups;
}

}  // namespace tcprof::analysis
