#include "profiler/cpu_profiler.h"

#include <algorithm>

namespace tcprof {

CpuProfiler::CpuProfiler(RunWriter* writer, ProfileMode mode, int32_t stream)
    : writer_(writer), mode_(writer ? mode : ProfileMode::Off), stream_(stream) {}

CpuProfiler::~CpuProfiler() { end_call(); }

KernelKey CpuProfiler::key(std::string_view name, std::string_view kind, std::string_view device) {
  if (!writer_) return {};
  return {writer_->intern(name), writer_->intern(kind), writer_->intern(device)};
}

void CpuProfiler::begin_call(Id call_id) {
  end_call();  // a window left open (an exception skipped end_call) is closed, not merged
  call_id_ = call_id;
  if (observer_ && call_id_ != 0 && mode_ != ProfileMode::Off) observer_->call_begin(call_id_);
}

void CpuProfiler::end_call_scope() {
  if (observer_ && call_id_ != 0 && mode_ != ProfileMode::Off) observer_->call_scope_end();
}

void CpuProfiler::end_call() {
  if (mode_ == ProfileMode::Summary) {
    for (uint32_t name_id : touched_) {
      write_aggregate(name_id, by_name_[name_id]);
      by_name_[name_id].count = 0;
    }
    for (const auto& [k, a] : overflow_) write_aggregate(k.first, a);
    touched_.clear();
    overflow_.clear();
  }
  if (observer_ && call_id_ != 0 && mode_ != ProfileMode::Off) observer_->call_end();
  call_id_ = 0;
}

void CpuProfiler::record_full(const KernelKey& key, Id graph_id, int64_t start_ns,
                              int64_t duration_ns) {
  KernelEvent e;
  e.call_id = call_id_;
  e.graph_id = graph_id;
  e.name_id = key.name_id;
  e.kind_id = key.kind_id;
  e.device_id = key.device_id;
  e.stream = stream_;
  e.start_ns = start_ns;
  e.duration_ns = duration_ns;
  writer_->record(e);
}

void CpuProfiler::add(Aggregate& a, int64_t start_ns, int64_t duration_ns) {
  if (a.count == 0) {
    a.first_start = start_ns;
    a.min = a.max = duration_ns;
  } else {
    a.min = std::min(a.min, duration_ns);
    a.max = std::max(a.max, duration_ns);
  }
  ++a.count;
  a.total += duration_ns;
  a.last_end = std::max(a.last_end, start_ns + duration_ns);
  double d = static_cast<double>(duration_ns);
  a.sum_sq += d * d;
}

void CpuProfiler::fold(const KernelKey& key, Id graph_id, int64_t start_ns, int64_t duration_ns) {
  if (key.name_id >= by_name_.size()) by_name_.resize(key.name_id + 1);
  Aggregate& a = by_name_[key.name_id];
  if (a.count == 0) {
    a = Aggregate{};
    a.graph_id = graph_id;
    a.kind_id = key.kind_id;
    a.device_id = key.device_id;
    touched_.push_back(key.name_id);
  } else if (a.graph_id != graph_id || a.kind_id != key.kind_id) {
    Aggregate& o = overflow_[{key.name_id, graph_id}];
    if (o.count == 0) {
      o.graph_id = graph_id;
      o.kind_id = key.kind_id;
      o.device_id = key.device_id;
    }
    add(o, start_ns, duration_ns);
    return;
  }
  add(a, start_ns, duration_ns);
}

void CpuProfiler::write_aggregate(uint32_t name_id, const Aggregate& a) {
  if (a.count == 0) return;
  KernelSummaryEvent e;
  e.call_id = call_id_;
  e.graph_id = a.graph_id;
  e.name_id = name_id;
  e.kind_id = a.kind_id;
  e.device_id = a.device_id;
  e.stream = stream_;
  e.start_ns = a.first_start;
  e.end_ns = a.last_end;
  e.count = a.count;
  e.total_ns = a.total;
  e.min_ns = a.min;
  e.max_ns = a.max;
  e.sum_sq_ns2 = a.sum_sq;
  writer_->record(std::move(e));
}

}  // namespace tcprof
