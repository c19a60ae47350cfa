#include "gui/kernel_data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>

namespace tcprof::gui {

void KernelData::load(const RunReader& reader, Id run_id,
                      const std::function<void(int64_t)>& progress) {
  // A copy outside every call (analysis::stats_kind) is an entry apart from the same copy in a call.
  std::unordered_map<std::string, uint32_t> name_ids, outside_call_name_ids;
  std::map<std::pair<std::string, int>, size_t> lane_ids;  // (device, stream), sorted for display
  auto intern_name = [&](const std::string& name, std::string_view kind) {
    auto& ids = kind == analysis::kOutsideCallsKind ? outside_call_name_ids : name_ids;
    auto [it, fresh] = ids.try_emplace(name, static_cast<uint32_t>(names.size()));
    if (fresh) {
      names.push_back(QString::fromStdString(name));
      kinds.push_back(QString::fromUtf8(kind.data(), static_cast<int>(kind.size())));
    }
    return it->second;
  };
  auto lane_for = [&](const std::string& device, int stream) -> KernelLane& {
    auto [it, fresh] = lane_ids.try_emplace({device, stream}, lanes.size());
    if (fresh) {
      KernelLane lane;
      lane.device = QString::fromStdString(device);
      lane.stream = stream;
      const bool cpu = device.rfind("cpu", 0) == 0 || device.empty();
      lane.label = cpu ? QString("CPU thread %1").arg(stream) : QString("%1 stream %2").arg(lane.device).arg(stream);
      lanes.push_back(std::move(lane));
    }
    return lanes[it->second];
  };
  GraphSpan span{-1, 0, 0};
  int64_t span_call = -1;
  reader.for_each_kernel(run_id, [&](const KernelRow& k) {
    const uint32_t name = intern_name(k.name, analysis::stats_kind(k.kind, k.name, k.call_id));
    KernelLane& lane = lane_for(k.device, k.stream);
    lane.start.push_back(k.start_ns);
    lane.duration.push_back(k.duration_ns);
    lane.graph_id.push_back(k.graph_id);
    lane.name.push_back(name);
    lane.max_duration = std::max(lane.max_duration, k.duration_ns);
    // Kernels arrive by start time: a graph span closes when the call or graph changes.
    if (k.graph_id != span.graph_id || k.call_id != span_call) {
      if (span.graph_id > 0) graph_spans.push_back(span);
      span = {k.graph_id, k.start_ns, k.start_ns + k.duration_ns};
      span_call = k.call_id;
    } else {
      span.end_ns = std::max(span.end_ns, k.start_ns + k.duration_ns);
    }
    if (++total % 100000 == 0 && progress) progress(total);
  });
  if (span.graph_id > 0) graph_spans.push_back(span);
  for (KernelSummaryRow& row : reader.kernel_summaries(run_id)) {
    KernelLane& lane = lane_for(row.device, row.stream);
    lane.folded_name.push_back(intern_name(row.name, analysis::stats_kind(row.kind, row.name, row.call_id)));
    lane.max_folded_span = std::max(lane.max_folded_span, row.end_ns - row.start_ns);
    total += row.count;
    lane.folded.push_back(std::move(row));
  }
  // Lanes were created in first-seen order; show them ordered by device then stream.
  std::vector<KernelLane> sorted;
  sorted.reserve(lanes.size());
  for (auto& [key_pair, index] : lane_ids) sorted.push_back(std::move(lanes[index]));
  lanes = std::move(sorted);
}

size_t KernelData::first_visible(const KernelLane& lane, int64_t t) {
  auto it = std::lower_bound(lane.start.begin(), lane.start.end(), t - lane.max_duration);
  return static_cast<size_t>(it - lane.start.begin());
}

int KernelData::name_index(const QString& name, const QString& kind) const {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name && kinds[i] == kind) return static_cast<int>(i);
  }
  return name_index(name);
}

int KernelData::name_index(const QString& name) const {
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

std::vector<analysis::KernelStats> KernelData::summarize(TimeRange range) const {
  analysis::KernelStatsBuilder builder;
  auto in_range = [&](int64_t start) { return range.empty() || (start >= range.start_ns && start < range.end_ns); };
  for (const KernelLane& lane : lanes) {
    // A lane is one device: each name's group is resolved once, then launches add by index.
    std::vector<size_t> group_of(names.size(), SIZE_MAX);
    const std::string device = lane.device.toStdString();
    auto group = [&](uint32_t name) {
      if (group_of[name] == SIZE_MAX) {
        group_of[name] = builder.group(names[name].toStdString(), kinds[name].toStdString(), device);
      }
      return group_of[name];
    };
    size_t begin = 0, end = lane.size();
    if (!range.empty()) {
      begin = static_cast<size_t>(
          std::lower_bound(lane.start.begin(), lane.start.end(), range.start_ns) - lane.start.begin());
      end = static_cast<size_t>(
          std::lower_bound(lane.start.begin(), lane.start.end(), range.end_ns) - lane.start.begin());
    }
    for (size_t i = begin; i < end; ++i) builder.add(group(lane.name[i]), lane.duration[i]);
    for (size_t i = 0; i < lane.folded.size(); ++i) {
      const KernelSummaryRow& f = lane.folded[i];
      if (f.count <= 0 || !in_range(f.start_ns)) continue;
      builder.add_folded(group(lane.folded_name[i]), f.count, f.total_ns, f.min_ns, f.max_ns, f.sum_sq_ns2);
    }
  }
  return builder.finish();
}

}  // namespace tcprof::gui
