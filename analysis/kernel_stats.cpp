#include "analysis/kernel_stats.h"

#include "analysis/statistics.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace tcprof::analysis {

size_t KernelStatsBuilder::group(std::string_view name, std::string_view kind, std::string_view device) {
  // The kind is part of a group's identity only where it is the outside-calls kind: a copy made
  // for the inputs and the same copy inside a call are two rows.
  std::string key;
  key.reserve(name.size() + device.size() + 2);
  key.append(name).push_back('\0');
  key.append(device);
  if (kind == kOutsideCallsKind) key.push_back('\1');
  auto [it, inserted] = index_.try_emplace(std::move(key), accs_.size());
  if (inserted) {
    Acc a;
    a.stats.name = std::string(name);
    a.stats.kind = std::string(kind);
    a.stats.device = std::string(device);
    a.stats.min_ns = INT64_MAX;
    accs_.push_back(std::move(a));
  }
  return it->second;
}

void KernelStatsBuilder::add(size_t group, int64_t d) {
  Acc& a = accs_[group];
  a.singles.push_back(d);
  ++a.stats.instances;
  a.stats.total_ns += d;
  a.stats.min_ns = std::min(a.stats.min_ns, d);
  a.stats.max_ns = std::max(a.stats.max_ns, d);
  a.sum_sq += static_cast<double>(d) * static_cast<double>(d);
}

void KernelStatsBuilder::add_folded(size_t group, int64_t count, int64_t total_ns, int64_t min_ns,
                                    int64_t max_ns, double sum_sq_ns2) {
  if (count <= 0) return;
  Acc& a = accs_[group];
  a.folded.emplace_back(static_cast<double>(total_ns) / static_cast<double>(count), count);
  a.stats.instances += count;
  a.stats.total_ns += total_ns;
  a.stats.min_ns = std::min(a.stats.min_ns, min_ns);
  a.stats.max_ns = std::max(a.stats.max_ns, max_ns);
  a.sum_sq += sum_sq_ns2;
}

std::vector<KernelStats> KernelStatsBuilder::finish() {
  int64_t all = 0;
  for (const auto& a : accs_) all += a.stats.total_ns;
  std::vector<KernelStats> out;
  for (auto& a : accs_) {
    if (a.stats.instances == 0) continue;
    KernelStats s = std::move(a.stats);
    double n = static_cast<double>(s.instances);
    s.avg_ns = static_cast<double>(s.total_ns) / n;
    if (a.folded.empty()) {
      s.median_ns = median(std::move(a.singles));  // the common case, without sorting pairs
    } else {
      for (int64_t d : a.singles) a.folded.emplace_back(static_cast<double>(d), 1);
      s.median_ns = weighted_median(std::move(a.folded));
    }
    s.stddev_ns = s.instances > 1 ? std::sqrt(std::max(0.0, (a.sum_sq - n * s.avg_ns * s.avg_ns) / (n - 1))) : 0.0;
    s.time_percent = all > 0 ? 100.0 * static_cast<double>(s.total_ns) / static_cast<double>(all) : 0;
    out.push_back(std::move(s));
  }
  accs_.clear();
  index_.clear();
  std::sort(out.begin(), out.end(), [](const KernelStats& a, const KernelStats& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return out;
}

std::vector<KernelStats> kernel_stats(const RunReader& reader, Id run_id, std::optional<TimeRange> range) {
  KernelStatsBuilder builder;
  // Rows arrive by start time, so consecutive launches of one kernel repeat the last group.
  std::string last_name, last_device;
  bool last_outside = false;
  size_t last_group = SIZE_MAX;
  reader.for_each_kernel(run_id, [&](const KernelRow& k) {
    if (last_group == SIZE_MAX || k.name != last_name || k.device != last_device || (k.call_id == 0) != last_outside) {
      last_group = builder.group(k.name, stats_kind(k.kind, k.name, k.call_id), k.device);
      last_outside = k.call_id == 0;
      last_name = k.name;
      last_device = k.device;
    }
    builder.add(last_group, k.duration_ns);
  }, range);
  for (const auto& s : reader.kernel_summaries(run_id)) {
    if (range && (s.start_ns < range->start_ns || s.start_ns >= range->end_ns)) continue;
    builder.add_folded(builder.group(s.name, stats_kind(s.kind, s.name, s.call_id), s.device), s.count, s.total_ns, s.min_ns,
                       s.max_ns, s.sum_sq_ns2);
  }
  return builder.finish();
}

KernelPlace kernel_place(std::string_view kind) {
  if (kind == "gpu" || kind == "memcpy" || kind == "memset") return KernelPlace::Gpu;
  if (kind == kOutsideCallsKind) return KernelPlace::OutsideCalls;
  if (kind == "cuda_runtime" || kind == "cuda_driver" || kind == "sync" || kind == "cupti_overhead") {
    return KernelPlace::CudaApi;
  }
  return KernelPlace::Host;
}

const char* place_name(KernelPlace place) {
  switch (place) {
    case KernelPlace::Gpu: return "gpu";
    case KernelPlace::CudaApi: return "cuda_api";
    case KernelPlace::OutsideCalls: return "outside_calls";
    case KernelPlace::Host: break;
  }
  return "host";
}

std::string_view stats_kind(std::string_view kind, std::string_view name, Id call_id) {
  return call_id == 0 && kind == "memcpy" && name == "memcpy HtoD" ? kOutsideCallsKind : kind;
}

std::vector<KernelStats> stats_of_place(const std::vector<KernelStats>& all, KernelPlace place) {
  std::vector<KernelStats> out;
  int64_t total = 0;
  for (const auto& k : all) {
    if (kernel_place(k.kind) != place) continue;
    out.push_back(k);
    total += k.total_ns;
  }
  for (auto& k : out) {
    k.time_percent = total > 0 ? 100.0 * static_cast<double>(k.total_ns) / static_cast<double>(total) : 0;
  }
  return out;
}

}  // namespace tcprof::analysis
