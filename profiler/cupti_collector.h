// CuptiCollector: GPU activity collection for one run through CUPTI's Activity API. It loads
// libcupti at run time (cupti_loader.h), enables kernel, memcpy, memset, runtime, driver,
// synchronization, external-correlation and overhead records, hands CUPTI buffers from a bounded
// pool, and turns completed buffers into rows with CuptiRecordProcessor.
//
// Use: start() once per process (CUPTI's callbacks are process-wide), wrap each graph/op launch
// in launch_scope() so its GPU work is attributed to it, call flush() at call or step boundaries.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/run_writer.h"
#include "profiler/cupti_buffer_pool.h"
#include "profiler/cupti_loader.h"
#include "profiler/cupti_records.h"
#include "profiler/gpu_call_sampling.h"
#include "profiler/launch_observer.h"

namespace tcprof {

// The CUPTI record kinds a collector enables, from TCPROF_CUPTI_RECORD's value: a comma list of
// kernel, memcpy, memset, runtime, driver, sync, correlation, overhead and launches (a correlation
// scope per launch: without it GPU work is attributed to its call only), for measuring what each
// costs (docs/gpu.md, "What recording costs"). Null or empty: everything.
struct CuptiRecordSelection {
  std::vector<CUpti_ActivityKind> kinds;
  bool launch_scopes = true;
};
CuptiRecordSelection cupti_record_selection(const char* env);

// Offset that puts CUPTI timestamps on tcprof::now_ns(): sampled several times, keeping the
// sample with the tightest host bracket around cuptiGetTimestamp.
int64_t measure_cupti_clock_offset(const CuptiApi& api);

class CuptiCollector : public LaunchObserver {
 public:
  struct Options {
    size_t buffer_bytes = size_t{2} << 20;
    size_t max_buffers = 32;  // 64 MiB at most in flight
    std::vector<std::string> library_paths = default_cupti_paths();
    ProfileMode mode = ProfileMode::Full;  // summary folds GPU rows per call window
    // Which calls record their GPU work (gpu_call_sampling.h). Null: the mode's policy, counted
    // from this collector's first call; a caller that starts collectors one after another over
    // the same calls (bench --recording-cost's blocks) passes one to keep counting across them.
    std::shared_ptr<GpuCallSampling> sampling;
  };

  // Null (with `error` saying why, e.g. "GPU collection unavailable: ...") when libcupti cannot
  // be loaded, there is no CUDA driver or GPU, or another collector is active.
  static std::unique_ptr<CuptiCollector> start(RunWriter& writer, const Options& options,
                                               std::string* error);
  // The same with CUPTI's functions given: the tests' stand-ins, which record what the collector
  // asks of CUPTI (no GPU needed).
  static std::unique_ptr<CuptiCollector> start_with(RunWriter& writer, std::shared_ptr<const CuptiApi> api,
                                                    const Options& options, std::string* error);
  ~CuptiCollector();  // stop()
  CuptiCollector(const CuptiCollector&) = delete;
  CuptiCollector& operator=(const CuptiCollector&) = delete;

  // Pushes an external correlation id for the calling thread while alive: the CUDA calls made
  // meanwhile, and the GPU work they launch, carry `call_id` and `graph_id`.
  class LaunchScopeGuard {
   public:
    LaunchScopeGuard(CuptiCollector* collector, Id call_id, Id graph_id);
    ~LaunchScopeGuard();
    LaunchScopeGuard(const LaunchScopeGuard&) = delete;
    LaunchScopeGuard& operator=(const LaunchScopeGuard&) = delete;

   private:
    CuptiCollector* collector_;
  };
  LaunchScopeGuard launch_scope(Id call_id, Id graph_id) { return {this, call_id, graph_id}; }

  // Call/step boundary: delivers every completed record (cuptiActivityFlushAll) and closes the
  // attribution window.
  void flush();

  // LaunchObserver: a call opens a scope of its own (graph 0) for the CUDA calls it makes outside
  // every launch; the CPU profiler's launches open one each inside it; each call end closes the
  // call's scope and flushes. A call the sampling does not record switches CUPTI's records off
  // and opens no scopes, unless it launches a graph never recorded: from that launch on it is.
  // The end of a call before a recorded one switches them on again.
  void call_begin(Id call_id) override;
  void call_scope_end() override;
  void launch_begin(Id call_id, Id graph_id) override;
  void launch_end() override;
  void call_end() override;
  // Disables collection, flushes, writes what is pending and records the counters.
  void stop();

  CuptiRecordProcessor::Stats stats() const { return processor_.stats(); }
  const std::string& library_path() const { return api_->library_path; }

 private:
  CuptiCollector(RunWriter& writer, std::shared_ptr<const CuptiApi> api, const Options& options,
                 int64_t clock_offset);
  static void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI on_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                           size_t size, size_t valid_bytes);

  RunWriter& writer_;
  std::shared_ptr<const CuptiApi> api_;
  CuptiBufferPool pool_;
  LaunchScopeTable scopes_;
  bool call_scope_open_ = false;  // call_begin pushed a correlation id that call_end pops
  bool launch_scopes_ = true;     // a correlation scope per launch (TCPROF_CUPTI_RECORD)
  std::shared_ptr<GpuCallSampling> sampling_;
  int64_t recorded_at_start_ = 0, skipped_at_start_ = 0;  // the counters are this collector's share
  Id current_call_ = 0;
  bool records_on_ = true;      // CUPTI's records enabled (they are from start())
  int64_t switch_failures_ = 0;  // cuptiActivityEnable/Disable refused while switching
  // Sampling, current_call_, records_on_ and the switching: calls and launches may come from
  // several threads (autograd runs a backward on a thread of its own).
  std::mutex state_mutex_;
  void switch_records(bool on);
  void push_scope(Id call_id, Id graph_id);
  void pop_scope();
  CuptiRecordProcessor processor_;
  std::vector<CUpti_ActivityKind> enabled_;
  // Summary mode on a CUPTI with per-API selection: the runtime and driver callback ids enabled
  // one by one (cuda_api_selection.h) instead of the RUNTIME and DRIVER kinds.
  std::vector<uint32_t> runtime_api_ids_, driver_api_ids_;
  void enable_summary_apis(bool enable);
  bool stopped_ = false;
};

}  // namespace tcprof
