#include "profiler/cupti_collector.h"

#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/vendor_library.h"
#include "profiler/cuda_api_selection.h"

namespace tcprof {

namespace {

// CUPTI's buffer callbacks carry no user data: they reach the one active collector through this.
// Callbacks hold g_callback_mutex while they use the collector, and stop() takes it to clear
// g_active, so a buffer completing on CUPTI's thread never races the collector's destruction.
std::atomic<CuptiCollector*> g_active{nullptr};
std::mutex g_callback_mutex;

// Per launching thread: whether each open launch pushed a correlation scope, so that its end pops
// only what it pushed (CUPTI's correlation stacks are per thread too). One collector is active at
// a time, and launches nest within a thread.
thread_local std::vector<bool> t_launch_pushed;

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
};

const char* kind_name(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "EXTERNAL_CORRELATION";
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
    default: return "?";
  }
}

}  // namespace

CuptiRecordSelection cupti_record_selection(const char* env) {
  CuptiRecordSelection all{{std::begin(kKinds), std::end(kKinds)}, true};
  if (!env || !*env) return all;
  const std::string list = std::string(",") + env + ",";
  auto has = [&](const char* token) { return list.find(std::string(",") + token + ",") != std::string::npos; };
  CuptiRecordSelection chosen;
  chosen.launch_scopes = has("launches");
  const std::pair<const char*, CUpti_ActivityKind> names[] = {
      {"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL}, {"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY},
      {"memset", CUPTI_ACTIVITY_KIND_MEMSET}, {"runtime", CUPTI_ACTIVITY_KIND_RUNTIME},
      {"driver", CUPTI_ACTIVITY_KIND_DRIVER}, {"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
      {"correlation", CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION}, {"overhead", CUPTI_ACTIVITY_KIND_OVERHEAD}};
  for (const auto& [name, kind] : names) {
    if (has(name)) chosen.kinds.push_back(kind);
  }
  return chosen;
}

int64_t measure_cupti_clock_offset(const CuptiApi& api) {
  int64_t best_offset = 0;
  int64_t best_bracket = std::numeric_limits<int64_t>::max();
  for (int i = 0; i < 16; ++i) {
    uint64_t gpu = 0;
    int64_t before = now_ns();
    if (api.get_timestamp(&gpu) != CUPTI_SUCCESS) continue;
    int64_t after = now_ns();
    if (after - before < best_bracket) {
      best_bracket = after - before;
      best_offset = before + (after - before) / 2 - static_cast<int64_t>(gpu);
    }
  }
  return best_offset;
}

CuptiCollector::CuptiCollector(RunWriter& writer, std::shared_ptr<const CuptiApi> api,
                               const Options& options, int64_t clock_offset)
    : writer_(writer),
      api_(std::move(api)),
      pool_(options.buffer_bytes, options.max_buffers),
      processor_(writer, *api_, scopes_, clock_offset, options.mode) {
  sampling_ = options.sampling ? options.sampling : std::make_shared<GpuCallSampling>(gpu_sampling_policy(options.mode));
  recorded_at_start_ = sampling_->calls_recorded();
  skipped_at_start_ = sampling_->calls_skipped();
}

std::unique_ptr<CuptiCollector> CuptiCollector::start(RunWriter& writer, const Options& options,
                                                      std::string* error) {
  auto fail = [&](std::string why) -> std::unique_ptr<CuptiCollector> {
    if (error) *error = std::move(why);
    return nullptr;
  };
  // The policy first: a bad TCPROF_SUMMARY_GPU_EVERY is the user's to fix, said before anything
  // is loaded.
  Options chosen = options;
  if (!chosen.sampling) chosen.sampling = std::make_shared<GpuCallSampling>(gpu_sampling_policy(options.mode));
  CuptiLoadResult loaded = load_cupti(options.library_paths);
  if (!loaded.available()) return fail(loaded.error);
  // CUPTI loads without a driver but then fails with CUPTI_ERROR_UNKNOWN: say the real reason.
  if (!vendor_library_present("libcuda.so.1")) {
    return fail("GPU collection unavailable: no CUDA driver (libcuda.so.1 not found); CPU "
                "timings are still recorded");
  }
  return start_with(writer, loaded.api, chosen, error);
}

std::unique_ptr<CuptiCollector> CuptiCollector::start_with(RunWriter& writer, std::shared_ptr<const CuptiApi> loaded,
                                                           const Options& options, std::string* error) {
  auto fail = [&](std::string why) -> std::unique_ptr<CuptiCollector> {
    if (error) *error = std::move(why);
    return nullptr;
  };
  const CuptiApi& api = *loaded;
  int64_t offset = measure_cupti_clock_offset(api);
  std::unique_ptr<CuptiCollector> c(new CuptiCollector(writer, loaded, options, offset));
  CuptiCollector* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, c.get())) {
    c->stopped_ = true;
    return fail("GPU collection unavailable: another CUPTI collector is active in this process");
  }
  CUptiResult r = api.activity_register_callbacks(&on_buffer_requested, &on_buffer_completed);
  if (r != CUPTI_SUCCESS) {
    g_active.store(nullptr);
    c->stopped_ = true;
    return fail(fmt::format("GPU collection unavailable: cuptiActivityRegisterCallbacks failed: "
                            "{} (no CUDA driver or GPU?)",
                            api.error_text(r)));
  }
  // Summary mode records only the API calls its report reads, chosen at the source where CUPTI
  // can: every other runtime and driver call then costs CUPTI nothing.
  const bool select_apis = options.mode == ProfileMode::Summary && api.activity_enable_runtime_api &&
                           api.activity_enable_driver_api;
  if (select_apis) {
    c->runtime_api_ids_ = summary_api_callback_ids(api, CUPTI_CB_DOMAIN_RUNTIME_API);
    c->driver_api_ids_ = summary_api_callback_ids(api, CUPTI_CB_DOMAIN_DRIVER_API);
    c->enable_summary_apis(true);
  }
  const CuptiRecordSelection selection = cupti_record_selection(std::getenv("TCPROF_CUPTI_RECORD"));
  c->launch_scopes_ = selection.launch_scopes;
  for (CUpti_ActivityKind kind : selection.kinds) {
    if (select_apis && (kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER)) continue;
    r = api.activity_enable(kind);
    if (r != CUPTI_SUCCESS) {
      for (CUpti_ActivityKind k : c->enabled_) api.activity_disable(k);
      c->enable_summary_apis(false);
      g_active.store(nullptr);
      c->stopped_ = true;
      return fail(fmt::format("GPU collection unavailable: enabling CUPTI {} records failed: {} "
                              "(no CUDA driver or GPU?)",
                              kind_name(kind), api.error_text(r)));
    }
    c->enabled_.push_back(kind);
  }
  writer.record(CounterEvent{"cupti.clock_offset_ns", offset});
  if (select_apis) {
    writer.record(CounterEvent{"cupti.summary_api_callbacks",
                               static_cast<int64_t>(c->runtime_api_ids_.size() + c->driver_api_ids_.size())});
  }
  return c;
}

void CuptiCollector::enable_summary_apis(bool enable) {
  const uint8_t on = enable ? 1 : 0;
  for (uint32_t cbid : runtime_api_ids_) api_->activity_enable_runtime_api(cbid, on);
  for (uint32_t cbid : driver_api_ids_) api_->activity_enable_driver_api(cbid, on);
}

CuptiCollector::~CuptiCollector() { stop(); }

void CUPTIAPI CuptiCollector::on_buffer_requested(uint8_t** buffer, size_t* size,
                                                  size_t* max_records) {
  std::lock_guard<std::mutex> lock(g_callback_mutex);
  CuptiCollector* c = g_active.load();
  *max_records = 0;  // as many as fit
  *buffer = c ? c->pool_.acquire() : nullptr;
  *size = *buffer ? c->pool_.buffer_bytes() : 0;
}

void CUPTIAPI CuptiCollector::on_buffer_completed(CUcontext context, uint32_t stream_id,
                                                  uint8_t* buffer, size_t /*size*/,
                                                  size_t valid_bytes) {
  std::lock_guard<std::mutex> lock(g_callback_mutex);
  CuptiCollector* c = g_active.load();
  if (!c) return;  // stop() has finished; the pool owns and frees the buffer
  c->processor_.buffer_completed(context, stream_id, buffer, valid_bytes);
  c->pool_.release(buffer);
}

CuptiCollector::LaunchScopeGuard::LaunchScopeGuard(CuptiCollector* collector, Id call_id,
                                                   Id graph_id)
    : collector_(collector) {
  if (collector_) collector_->launch_begin(call_id, graph_id);
}

CuptiCollector::LaunchScopeGuard::~LaunchScopeGuard() {
  if (collector_) collector_->launch_end();
}

void CuptiCollector::call_begin(Id call_id) {
  if (stopped_) return;
  bool recorded = false;
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    current_call_ = call_id;
    recorded = sampling_->call_begin(call_id);
    // Off here, not at the last call's end: a training step's kernels may still be running then,
    // and the next call's start comes after the step waited for its loss.
    switch_records(recorded);
  }
  if (!recorded) return;
  push_scope(call_id, 0);
  call_scope_open_ = true;
}

void CuptiCollector::call_scope_end() {
  if (call_scope_open_) pop_scope();
  call_scope_open_ = false;
}

void CuptiCollector::call_end() {
  call_scope_end();
  if (stopped_) return;
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (records_on_) flush();  // a call not recorded left nothing to deliver
  // On for the next call already, outside its timed window (the call's CUDA events; a call ends
  // here after its time is taken), so the copies that prepare it are recorded with it.
  if (sampling_->next_call_recorded()) switch_records(true);
}

void CuptiCollector::launch_begin(Id call_id, Id graph_id) {
  bool push = false;
  if (!stopped_ && sampling_->policy().records_every_call()) {
    push = launch_scopes_;  // records stay on, nothing to decide: no lock on the launch path
  } else if (!stopped_) {
    std::lock_guard<std::mutex> lock(state_mutex_);
    if (!records_on_ && call_id != 0 && call_id == current_call_ && sampling_->records_new_graph(graph_id)) {
      // A graph no call has recorded yet (a recompile's): recorded from this launch to the call's
      // end. Only the launch opens a scope: it may run on another thread than the call's
      // (autograd's), where the call's scope could not be closed.
      switch_records(true);
    }
    if (records_on_) {
      if (call_id != 0) sampling_->graph_recorded(graph_id);
      push = launch_scopes_;
    }
  }
  if (push) push_scope(call_id, graph_id);
  t_launch_pushed.push_back(push);
}

void CuptiCollector::launch_end() {
  if (t_launch_pushed.empty()) return;
  const bool pushed = t_launch_pushed.back();
  t_launch_pushed.pop_back();
  if (pushed) pop_scope();
}

// Called with state_mutex_ held. Between calls the records stay as the last call's end left
// them: on from the end of the call before a recorded call to the start of the next call not
// recorded.
void CuptiCollector::switch_records(bool on) {
  if (on == records_on_ || stopped_) return;
  for (CUpti_ActivityKind kind : enabled_) {
    if ((on ? api_->activity_enable(kind) : api_->activity_disable(kind)) != CUPTI_SUCCESS) ++switch_failures_;
  }
  enable_summary_apis(on);
  records_on_ = on;
}

void CuptiCollector::push_scope(Id call_id, Id graph_id) {
  if (stopped_) return;
  api_->activity_push_external_correlation_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                              scopes_.open({call_id, graph_id}));
}

void CuptiCollector::pop_scope() {
  if (stopped_) return;
  uint64_t last = 0;
  api_->activity_pop_external_correlation_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

void CuptiCollector::flush() {
  if (stopped_) return;
  api_->activity_flush_all(0);
  processor_.end_window();
  scopes_.retire_window();
}

void CuptiCollector::stop() {
  if (stopped_) return;
  stopped_ = true;
  for (CUpti_ActivityKind kind : enabled_) api_->activity_disable(kind);
  enable_summary_apis(false);
  // FORCED also completes buffers that are only partly filled.
  api_->activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  processor_.finish();
  {
    std::lock_guard<std::mutex> lock(g_callback_mutex);
    g_active.store(nullptr);
  }
  writer_.record(CounterEvent{"cupti.calls_recorded", sampling_->calls_recorded() - recorded_at_start_});
  writer_.record(CounterEvent{"cupti.calls_skipped", sampling_->calls_skipped() - skipped_at_start_});
  if (switch_failures_ > 0) writer_.record(CounterEvent{"cupti.switch_failures", switch_failures_});
  if (size_t refused = pool_.refusals(); refused > 0) {
    writer_.record(CounterEvent{"cupti.buffer_requests_refused", static_cast<int64_t>(refused)});
  }
}

}  // namespace tcprof
