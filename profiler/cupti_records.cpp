#include "profiler/cupti_records.h"

#include <algorithm>

#include <fmt/format.h>

#include "profiler/cuda_api_selection.h"
#include "profiler/cupti_record_types.h"

namespace tcprof {

// The kind CUPTI tags our pushes with; other tools' external ids (OpenACC, ...) are ignored.
constexpr CUpti_ExternalCorrelationKind kTcprofCorrelationKind =
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

uint64_t LaunchScopeTable::open(const LaunchScope& scope) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t id = next_id_++;
  current_.emplace(id, scope);
  return id;
}

std::optional<LaunchScope> LaunchScopeTable::find(uint64_t external_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = current_.find(external_id); it != current_.end()) return it->second;
  if (auto it = previous_.find(external_id); it != previous_.end()) return it->second;
  return std::nullopt;
}

void LaunchScopeTable::retire_window() {
  std::lock_guard<std::mutex> lock(mutex_);
  previous_ = std::move(current_);
  current_.clear();
}

namespace {

const char* memcpy_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    default: return "memcpy";
  }
}

const char* sync_name(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "event synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "stream wait event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "stream synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "context synchronize";
    default: return "synchronize";
  }
}

const char* overhead_name(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "cupti overhead: driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "cupti overhead: buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "cupti overhead: instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "cupti overhead: resource";
    default: return "cupti overhead";
  }
}

// Reads a record of type T from the walker's pointer. CUPTI aligns every record to 8 bytes, so
// this is a plain cast; the copy keeps the code independent of the buffer's lifetime.
template <typename T>
T as(const CUpti_Activity& record) {
  return *reinterpret_cast<const T*>(&record);
}

}  // namespace

CuptiRecordProcessor::CuptiRecordProcessor(RunWriter& writer, const CuptiApi& api,
                                           const LaunchScopeTable& scopes, int64_t gpu_to_host_ns,
                                           ProfileMode mode)
    : writer_(writer), api_(api), scopes_(scopes), offset_(gpu_to_host_ns), mode_(mode) {
  kind_gpu_ = writer_.intern("gpu");
  kind_memcpy_ = writer_.intern("memcpy");
  kind_memset_ = writer_.intern("memset");
  kind_runtime_ = writer_.intern("cuda_runtime");
  kind_driver_ = writer_.intern("cuda_driver");
  kind_sync_ = writer_.intern("sync");
  kind_overhead_ = writer_.intern("cupti_overhead");
  device_cpu_ = writer_.intern("cpu");
  device_cuda_ = writer_.intern("cuda");
}

void CuptiRecordProcessor::buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                            size_t valid_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  CUpti_Activity* record = nullptr;
  while (valid_bytes > 0 &&
         api_.activity_get_next_record(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    ++stats_.records;
    process(*record);
  }
  size_t dropped = 0;
  if (api_.activity_get_num_dropped_records(context, stream_id, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    stats_.dropped += static_cast<int64_t>(dropped);
    writer_.record(CounterEvent{"cupti.dropped_records", static_cast<int64_t>(dropped)});
  }
}

uint32_t CuptiRecordProcessor::cached_name(std::unordered_map<uint32_t, uint32_t>& cache,
                                           uint32_t code, const char* name) {
  auto [it, inserted] = cache.try_emplace(code, 0);
  if (inserted) it->second = writer_.intern(name);
  return it->second;
}

uint32_t CuptiRecordProcessor::device_id(uint32_t device) {
  auto [it, inserted] = devices_.try_emplace(device, 0);
  if (inserted) it->second = writer_.intern(fmt::format("cuda:{}", device));
  return it->second;
}

const CuptiRecordProcessor::ApiCallback& CuptiRecordProcessor::api_callback(CUpti_CallbackDomain domain,
                                                                            uint32_t cbid) {
  uint64_t key = (static_cast<uint64_t>(domain) << 32) | cbid;
  auto [it, inserted] = api_callbacks_.try_emplace(key);
  if (inserted) {
    const char* name = nullptr;
    if (api_.get_callback_name(domain, cbid, &name) == CUPTI_SUCCESS && name) {
      it->second.name_id = writer_.intern(name);
      it->second.kept_in_summary = api_kept_in_summary(name);
    } else {
      // A callback CUPTI cannot name is kept: better a row too many than a launch lost.
      it->second.name_id = writer_.intern(fmt::format(
          "{}#{}", domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cudaRuntime" : "cuDriver", cbid));
    }
  }
  return it->second;
}

void CuptiRecordProcessor::process(const CUpti_Activity& record) {
  KernelEvent row;
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto k = as<cupti::KernelRecord>(record);
      if (k.end < k.start || k.start == 0) break;
      ++stats_.kernels;
      auto [it, inserted] = kernel_names_.try_emplace(k.name, 0);
      if (inserted) it->second = writer_.intern(k.name ? k.name : "<unnamed kernel>");
      row.name_id = it->second;
      row.kind_id = kind_gpu_;
      row.device_id = device_id(k.deviceId);
      row.stream = static_cast<int32_t>(k.streamId);
      row.start_ns = host_ns(k.start);
      row.duration_ns = static_cast<int64_t>(k.end - k.start);
      row.grid[0] = k.gridX, row.grid[1] = k.gridY, row.grid[2] = k.gridZ;
      row.block[0] = k.blockX, row.block[1] = k.blockY, row.block[2] = k.blockZ;
      row.correlation_id = k.correlationId;
      emit(row, k.correlationId);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto m = as<cupti::MemcpyRecord>(record);
      if (m.end < m.start || m.start == 0) break;
      ++stats_.memcpys;
      row.name_id = cached_name(names_by_code_, (1u << 16) | m.copyKind, memcpy_name(m.copyKind));
      row.kind_id = kind_memcpy_;
      row.device_id = device_id(m.deviceId);
      row.stream = static_cast<int32_t>(m.streamId);
      row.start_ns = host_ns(m.start);
      row.duration_ns = static_cast<int64_t>(m.end - m.start);
      row.correlation_id = m.correlationId;
      row.bytes = static_cast<int64_t>(m.bytes);
      emit(row, m.correlationId);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto m = as<cupti::MemsetRecord>(record);
      if (m.end < m.start || m.start == 0) break;
      ++stats_.memsets;
      row.name_id = cached_name(names_by_code_, 2u << 16, "memset");
      row.kind_id = kind_memset_;
      row.device_id = device_id(m.deviceId);
      row.stream = static_cast<int32_t>(m.streamId);
      row.start_ns = host_ns(m.start);
      row.duration_ns = static_cast<int64_t>(m.end - m.start);
      row.correlation_id = m.correlationId;
      row.bytes = static_cast<int64_t>(m.bytes);
      emit(row, m.correlationId);
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto a = as<cupti::ApiRecord>(record);
      if (a.end < a.start) break;
      bool runtime = record.kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      const ApiCallback& callback =
          api_callback(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a.cbid);
      if (mode_ == ProfileMode::Summary && !callback.kept_in_summary) {
        ++stats_.api_skipped;
        return;
      }
      ++stats_.api_calls;
      row.name_id = callback.name_id;
      row.kind_id = runtime ? kind_runtime_ : kind_driver_;
      row.device_id = device_cpu_;
      row.stream = static_cast<int32_t>(a.threadId);  // the launching host thread
      row.start_ns = host_ns(a.start);
      row.duration_ns = static_cast<int64_t>(a.end - a.start);
      row.correlation_id = a.correlationId;
      emit(row, a.correlationId);
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      auto s = as<cupti::SyncRecord>(record);
      if (s.end < s.start) break;
      ++stats_.syncs;
      row.name_id = cached_name(names_by_code_, (3u << 16) | (static_cast<uint32_t>(s.type) & 0xffff),
                                sync_name(s.type));
      row.kind_id = kind_sync_;
      row.device_id = device_cuda_;
      row.stream = static_cast<int32_t>(s.streamId);
      row.start_ns = host_ns(s.start);
      row.duration_ns = static_cast<int64_t>(s.end - s.start);
      row.correlation_id = s.correlationId;
      emit(row, s.correlationId);
      return;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      auto o = as<cupti::OverheadRecord>(record);
      if (o.end < o.start) break;
      ++stats_.overheads;
      row.name_id = writer_.intern(overhead_name(o.overheadKind));
      row.kind_id = kind_overhead_;
      row.device_id = device_cpu_;
      row.start_ns = host_ns(o.start);
      row.duration_ns = static_cast<int64_t>(o.end - o.start);
      store(row);  // CUPTI's own cost: not launched by any call
      writer_.record(CounterEvent{"cupti.overhead_ns", row.duration_ns});
      return;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto e = as<cupti::ExternalCorrelationRecord>(record);
      ++stats_.external_correlations;
      if (e.externalKind == kTcprofCorrelationKind) on_external_correlation(e.correlationId, e.externalId);
      return;
    }
    default:
      ++stats_.other;
      return;
  }
  ++stats_.invalid;  // a record of a known kind without a complete time span
}

std::optional<uint64_t> CuptiRecordProcessor::external_for(uint32_t correlation_id) const {
  if (auto it = external_current_.find(correlation_id); it != external_current_.end()) return it->second;
  if (auto it = external_previous_.find(correlation_id); it != external_previous_.end()) return it->second;
  return std::nullopt;
}

void CuptiRecordProcessor::emit(KernelEvent row, uint32_t correlation_id) {
  if (correlation_id == 0) {
    ++stats_.unattributed;
    store(row);
    return;
  }
  if (auto external = external_for(correlation_id)) {
    attribute_and_write(row, *external);
  } else {
    waiting_current_[correlation_id].rows.push_back(row);  // its correlation record may follow
  }
}

void CuptiRecordProcessor::attribute_and_write(KernelEvent& row, uint64_t external_id) {
  if (auto scope = scopes_.find(external_id)) {
    row.call_id = scope->call_id;
    row.graph_id = scope->graph_id;
    ++stats_.attributed;
  } else {
    ++stats_.unattributed;
  }
  store(row);
}

void CuptiRecordProcessor::on_external_correlation(uint32_t correlation_id, uint64_t external_id) {
  external_current_[correlation_id] = external_id;
  for (auto* waiting : {&waiting_current_, &waiting_previous_}) {
    auto it = waiting->find(correlation_id);
    if (it == waiting->end()) continue;
    for (auto& row : it->second.rows) attribute_and_write(row, external_id);
    waiting->erase(it);
  }
}

void CuptiRecordProcessor::write_unattributed(std::unordered_map<uint32_t, Waiting>& waiting) {
  for (auto& [correlation, w] : waiting) {
    for (const auto& row : w.rows) {
      ++stats_.unattributed;
      store(row);
    }
  }
  waiting.clear();
}

void CuptiRecordProcessor::store(const KernelEvent& row) {
  if (mode_ == ProfileMode::Off) return;
  if (mode_ == ProfileMode::Full) {
    writer_.record(row);
    return;
  }
  SummaryKey key{row.call_id, row.graph_id, row.name_id, row.kind_id, row.device_id, row.stream};
  KernelSummaryEvent& a = summaries_[key];
  int64_t end = row.start_ns + row.duration_ns;
  if (a.count == 0) {
    a.call_id = row.call_id;
    a.graph_id = row.graph_id;
    a.name_id = row.name_id;
    a.kind_id = row.kind_id;
    a.device_id = row.device_id;
    a.stream = row.stream;
    a.start_ns = row.start_ns;
    a.end_ns = end;
    a.min_ns = a.max_ns = row.duration_ns;
  }
  a.start_ns = std::min(a.start_ns, row.start_ns);
  a.end_ns = std::max(a.end_ns, end);
  a.min_ns = std::min(a.min_ns, row.duration_ns);
  a.max_ns = std::max(a.max_ns, row.duration_ns);
  ++a.count;
  a.total_ns += row.duration_ns;
  a.bytes += row.bytes;
  a.sum_sq_ns2 += static_cast<double>(row.duration_ns) * static_cast<double>(row.duration_ns);
}

void CuptiRecordProcessor::write_summaries() {
  for (const auto& [key, a] : summaries_) writer_.record(a);
  summaries_.clear();
}

void CuptiRecordProcessor::end_window() {
  std::lock_guard<std::mutex> lock(mutex_);
  write_unattributed(waiting_previous_);
  waiting_previous_ = std::move(waiting_current_);
  waiting_current_.clear();
  external_previous_ = std::move(external_current_);
  external_current_.clear();
  write_summaries();
}

void CuptiRecordProcessor::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  write_unattributed(waiting_previous_);
  write_unattributed(waiting_current_);
  write_summaries();
}

CuptiRecordProcessor::Stats CuptiRecordProcessor::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace tcprof
