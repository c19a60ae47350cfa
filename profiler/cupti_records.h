// Turning CUPTI activity buffers into tcprof rows. This is the code the real buffer-completed
// callback runs (cupti_collector.cpp) and the code the tests feed with records built in memory:
// it walks a buffer with cuptiActivityGetNextRecord (through the loaded CuptiApi), converts each
// record into a KernelEvent on the host clock, and attributes GPU work to the call and graph that
// launched it through external correlation ids.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/events.h"
#include "core/run_writer.h"
#include "profiler/cupti_loader.h"
#include "profiler/profile_mode.h"

namespace tcprof {

// What launched a piece of GPU work: the scope open (pushed as an external correlation id) on the
// launching thread when the CUDA API call was made.
struct LaunchScope {
  Id call_id = 0;
  Id graph_id = 0;
};

// External id -> LaunchScope. open() is called on the launching threads, find() by the
// processor. Entries live for two windows (see retire_window): GPU work finishes within that.
class LaunchScopeTable {
 public:
  uint64_t open(const LaunchScope& scope);
  std::optional<LaunchScope> find(uint64_t external_id) const;
  void retire_window();

 private:
  mutable std::mutex mutex_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, LaunchScope> current_, previous_;
};

class CuptiRecordProcessor {
 public:
  struct Stats {
    // api_skipped: API records summary mode does not keep (cuda_api_selection.h), when CUPTI
    // delivered them anyway (a CUPTI without per-API selection).
    int64_t records = 0, kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, api_skipped = 0, syncs = 0,
            overheads = 0, external_correlations = 0, other = 0, attributed = 0,
            unattributed = 0, invalid = 0, dropped = 0;
  };

  // `gpu_to_host_ns` is added to every CUPTI timestamp to put it on tcprof::now_ns(). In
  // summary mode rows are folded per (call, graph, name, kind, device, stream) and written as
  // kernel_summaries at each window's end; off keeps only the counters.
  CuptiRecordProcessor(RunWriter& writer, const CuptiApi& api, const LaunchScopeTable& scopes,
                       int64_t gpu_to_host_ns, ProfileMode mode = ProfileMode::Full);

  // What the buffer-completed callback does: every record of the buffer, then CUPTI's count of
  // records dropped for (context, stream) since the last buffer.
  void buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t valid_bytes);
  // At a call or step boundary, after cuptiActivityFlushAll: rows still waiting for their
  // external correlation since the previous window are written without a call/graph.
  void end_window();
  // At stop: writes everything still waiting.
  void finish();

  Stats stats() const;

 private:
  struct Waiting {
    std::vector<KernelEvent> rows;
  };
  void process(const CUpti_Activity& record);
  void emit(KernelEvent row, uint32_t correlation_id);
  void attribute_and_write(KernelEvent& row, uint64_t external_id);
  void on_external_correlation(uint32_t correlation_id, uint64_t external_id);
  void write_unattributed(std::unordered_map<uint32_t, Waiting>& waiting);
  void store(const KernelEvent& row);  // by mode: a kernels row or a fold into summaries_
  void write_summaries();
  std::optional<uint64_t> external_for(uint32_t correlation_id) const;
  int64_t host_ns(uint64_t cupti_ns) const { return static_cast<int64_t>(cupti_ns) + offset_; }
  uint32_t device_id(uint32_t device);
  uint32_t cached_name(std::unordered_map<uint32_t, uint32_t>& cache, uint32_t code,
                       const char* name);
  // A runtime or driver API callback, looked up once: its interned name and whether
  // --profile summary keeps its records (cuda_api_selection.h).
  struct ApiCallback {
    uint32_t name_id = 0;
    bool kept_in_summary = true;
  };
  const ApiCallback& api_callback(CUpti_CallbackDomain domain, uint32_t cbid);

  RunWriter& writer_;
  const CuptiApi& api_;
  const LaunchScopeTable& scopes_;
  int64_t offset_;
  ProfileMode mode_;
  mutable std::mutex mutex_;  // buffers complete on CUPTI's thread and on the flushing thread
  Stats stats_;
  // Correlation id -> our external id, and rows waiting for one; two windows each.
  std::unordered_map<uint32_t, uint64_t> external_current_, external_previous_;
  std::unordered_map<uint32_t, Waiting> waiting_current_, waiting_previous_;
  // Interned-id caches: CUPTI's kernel name strings stay valid for the process.
  std::unordered_map<const char*, uint32_t> kernel_names_;
  std::unordered_map<uint64_t, ApiCallback> api_callbacks_;  // by (domain, cbid)
  std::unordered_map<uint32_t, uint32_t> devices_;
  std::unordered_map<uint32_t, uint32_t> names_by_code_;  // memcpy/memset/sync names by kind code
  using SummaryKey = std::tuple<Id, Id, uint32_t, uint32_t, uint32_t, int32_t>;
  std::map<SummaryKey, KernelSummaryEvent> summaries_;
  uint32_t kind_gpu_, kind_memcpy_, kind_memset_, kind_runtime_, kind_driver_, kind_sync_,
      kind_overhead_, device_cpu_, device_cuda_;
};

}  // namespace tcprof
