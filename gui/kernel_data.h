// Kernels of one run in a compact, column-wise form that the timeline can draw a million of:
// per lane (one CPU thread or GPU stream) arrays sorted by start time, names interned to
// indices. Summaries of any time range come from analysis/kernel_stats.h.
#pragma once
#include <QString>
#include <cstdint>
#include <functional>
#include <vector>

#include "analysis/kernel_stats.h"
#include "core/run_reader.h"

namespace tcprof::gui {

struct KernelLane {
  QString label;  // "cpu thread 0", "cuda:0 stream 7"
  QString device;
  int stream = 0;
  std::vector<int64_t> start, duration, graph_id;
  std::vector<uint32_t> name;  // index into KernelData::names
  int64_t max_duration = 0;    // lets a range query start early enough to catch long kernels
  size_t size() const { return start.size(); }
  // --profile summary rows (launches folded per name and call window), sorted by start.
  std::vector<KernelSummaryRow> folded;
  std::vector<uint32_t> folded_name;  // index into KernelData::names, per folded row
  int64_t max_folded_span = 0;
};

// A contiguous stretch of one graph's kernels within one call (the "graphs" timeline row).
struct GraphSpan {
  int64_t graph_id = 0, start_ns = 0, end_ns = 0;
};


class KernelData {
 public:
  std::vector<QString> names, kinds;  // kinds[i] is the kind of names[i]
  std::vector<KernelLane> lanes;
  std::vector<GraphSpan> graph_spans;
  int64_t total = 0;  // launches: individual kernel rows plus folded counts

  // Builds from a reader; `progress(done)` is called every 100k kernels (may be empty).
  void load(const RunReader& reader, Id run_id, const std::function<void(int64_t)>& progress);
  // Statistics (analysis/kernel_stats.h) of kernels starting in [range.start_ns, range.end_ns)
  // (all when range is empty), largest total time first.
  std::vector<analysis::KernelStats> summarize(TimeRange range = {}) const;
  // First index in `lane` whose kernel may overlap time t (start + duration > t is possible).
  static size_t first_visible(const KernelLane& lane, int64_t t);
  int name_index(const QString& name) const;  // -1 when absent
  // The entry of `name` grouped under `kind` (analysis::stats_kind), else the first of `name`.
  int name_index(const QString& name, const QString& kind) const;
};

}  // namespace tcprof::gui
