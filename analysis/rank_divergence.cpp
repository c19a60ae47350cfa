#include "analysis/rank_divergence.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace tcprof::analysis {
namespace {

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

}  // namespace

RankDivergence rank_divergence(const RunReader& reader, Id run_id) {
  RankDivergence out;
  auto runs = reader.runs();
  auto self = std::find_if(runs.begin(), runs.end(), [&](const RunRow& r) { return r.id == run_id; });
  if (self == runs.end() || self->world_size <= 1) return out;
  // Sessions per rank in id order; this run's position among its rank's sessions picks the others.
  std::map<int, std::vector<Id>> sessions;
  for (const auto& r : runs) {
    if (r.source == self->source && r.world_size == self->world_size) sessions[r.rank].push_back(r.id);
  }
  const auto& mine = sessions[self->rank];
  size_t k = static_cast<size_t>(std::find(mine.begin(), mine.end(), run_id) - mine.begin());
  for (const auto& [rank, ids] : sessions) {
    if (k >= ids.size()) continue;
    RankRun rr;
    rr.rank = rank;
    rr.run_id = ids[k];
    out.ranks.push_back(rr);
  }
  if (out.ranks.size() < 2) {
    out.ranks.clear();
    return out;
  }

  // Compile ids by rank, with the reason and start of the first rank that has each.
  std::map<std::string, std::vector<int>> present;
  std::map<std::string, std::pair<std::string, int64_t>> first_seen;
  std::map<std::string, std::map<int, int64_t>> recompiles, breaks;  // frame name -> rank -> count
  for (auto& rr : out.ranks) {
    for (const auto& r : runs) {
      if (r.id == rr.run_id) rr.status = r.status;
    }
    std::map<Id, std::string> frame_name;
    for (const auto& f : reader.frames(rr.run_id)) frame_name[f.id] = f.name;
    rr.frames = static_cast<int64_t>(frame_name.size());
    for (const auto& c : reader.compiles(rr.run_id)) {
      ++rr.compiles;
      present[c.compile_label].push_back(rr.rank);
      first_seen.try_emplace(c.compile_label, c.reason, c.start_ns);
      if (c.compile_label.size() < 2 || c.compile_label.substr(c.compile_label.find('/') + 1) != "0") {
        ++recompiles[frame_name[c.frame_id]][rr.rank];
        ++rr.recompiles;
      }
    }
    for (const auto& b : reader.graph_breaks(rr.run_id)) {
      ++breaks[frame_name[b.frame_id]][rr.rank];
      ++rr.graph_breaks;
    }
  }
  std::vector<int> all;
  for (const auto& rr : out.ranks) all.push_back(rr.rank);
  for (const auto& [label, ranks] : present) {
    if (ranks.size() == all.size()) continue;
    std::vector<int> missing;
    std::set_difference(all.begin(), all.end(), ranks.begin(), ranks.end(), std::back_inserter(missing));
    out.items.push_back({"compile_on_some_ranks", label,
                         fmt::format("on rank {} only; missing on {}", rank_list(ranks), rank_list(missing)),
                         first_seen[label].first, first_seen[label].second});
  }
  auto differ = [&](const std::map<std::string, std::map<int, int64_t>>& counts, const char* kind) {
    for (const auto& [frame, by_rank] : counts) {
      std::set<int64_t> values;
      std::string detail;
      for (int r : all) {
        auto it = by_rank.find(r);
        int64_t n = it == by_rank.end() ? 0 : it->second;
        values.insert(n);
        detail += fmt::format("{}rank {}: {}", detail.empty() ? "" : ", ", r, n);
      }
      if (values.size() > 1) out.items.push_back({kind, frame, detail, "", INT64_MAX});
    }
  };
  differ(recompiles, "recompiles_differ");
  differ(breaks, "graph_breaks_differ");
  std::stable_sort(out.items.begin(), out.items.end(),
                   [](const DivergenceItem& a, const DivergenceItem& b) { return a.start_ns < b.start_ns; });
  return out;
}

const char* divergence_what(const std::string& kind) {
  if (kind == "compile_on_some_ranks") return "compile";
  if (kind == "recompiles_differ") return "recompiles in";
  return "graph breaks in";
}

}  // namespace tcprof::analysis
