#include "gui/kernel_data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace tcprof::gui {

void KernelData::load(const RunReader& reader, Id run_id,
                      const std::function<void(int64_t)>& progress) {
  std::unordered_map<std::string, uint32_t> name_ids;
  std::map<std::pair<std::string, int>, size_t> lane_ids;  // (device, stream), sorted for display
  std::string key;
  GraphSpan span{-1, 0, 0};
  int64_t span_call = -1;
  reader.for_each_kernel(run_id, [&](const KernelRow& k) {
    auto [nit, fresh] = name_ids.try_emplace(k.name, static_cast<uint32_t>(names.size()));
    if (fresh) {
      names.push_back(QString::fromStdString(k.name));
      kinds.push_back(QString::fromStdString(k.kind));
    }
    auto [lit, new_lane] = lane_ids.try_emplace({k.device, k.stream}, lanes.size());
    if (new_lane) {
      KernelLane lane;
      lane.device = QString::fromStdString(k.device);
      lane.stream = k.stream;
      const bool cpu = k.device.rfind("cpu", 0) == 0 || k.device.empty();
      lane.label = cpu ? QString("CPU thread %1").arg(k.stream)
                       : QString("%1 stream %2").arg(lane.device).arg(k.stream);
      lanes.push_back(std::move(lane));
    }
    KernelLane& lane = lanes[lit->second];
    lane.start.push_back(k.start_ns);
    lane.duration.push_back(k.duration_ns);
    lane.graph_id.push_back(k.graph_id);
    lane.name.push_back(nit->second);
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

int KernelData::name_index(const QString& name) const {
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

std::vector<KernelSummaryRow> KernelData::summarize(TimeRange range) const {
  std::vector<std::vector<int64_t>> durations(names.size());
  for (const KernelLane& lane : lanes) {
    size_t begin = 0, end = lane.size();
    if (!range.empty()) {
      begin = static_cast<size_t>(
          std::lower_bound(lane.start.begin(), lane.start.end(), range.start_ns) - lane.start.begin());
      end = static_cast<size_t>(
          std::lower_bound(lane.start.begin(), lane.start.end(), range.end_ns) - lane.start.begin());
    }
    for (size_t i = begin; i < end; ++i) durations[lane.name[i]].push_back(lane.duration[i]);
  }
  std::vector<KernelSummaryRow> rows;
  int64_t all = 0;
  for (uint32_t n = 0; n < durations.size(); ++n) {
    auto& d = durations[n];
    if (d.empty()) continue;
    KernelSummaryRow r;
    r.name = n;
    r.instances = static_cast<int64_t>(d.size());
    double sum_sq = 0;
    r.min_ns = d.front();
    r.max_ns = d.front();
    for (int64_t v : d) {
      r.total_ns += v;
      r.min_ns = std::min(r.min_ns, v);
      r.max_ns = std::max(r.max_ns, v);
      sum_sq += static_cast<double>(v) * static_cast<double>(v);
    }
    const double count = static_cast<double>(r.instances);
    r.avg_ns = static_cast<double>(r.total_ns) / count;
    const size_t mid = d.size() / 2;
    std::nth_element(d.begin(), d.begin() + static_cast<ptrdiff_t>(mid), d.end());
    r.median_ns = static_cast<double>(d[mid]);
    if (d.size() % 2 == 0) {
      auto lower = *std::max_element(d.begin(), d.begin() + static_cast<ptrdiff_t>(mid));
      r.median_ns = (r.median_ns + static_cast<double>(lower)) / 2;
    }
    // Sample standard deviation, as nsys reports it.
    r.stddev_ns = r.instances > 1 ? std::sqrt(std::max(0.0, (sum_sq - count * r.avg_ns * r.avg_ns) /
                                                                  (count - 1)))
                                  : 0.0;
    all += r.total_ns;
    rows.push_back(r);
  }
  for (auto& r : rows) r.time_percent = all > 0 ? 100.0 * static_cast<double>(r.total_ns) / static_cast<double>(all) : 0;
  std::sort(rows.begin(), rows.end(), [this](const KernelSummaryRow& a, const KernelSummaryRow& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : names[a.name] < names[b.name];
  });
  return rows;
}

}  // namespace tcprof::gui
