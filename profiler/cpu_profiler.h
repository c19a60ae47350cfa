// CpuProfiler: the timing API the compiler's runtime calls around every executed unit (generated
// kernel, extern call, fallback kernel, eager op, guard evaluation), in one of three modes:
//   off      nothing is measured or recorded (one predictable branch per launch);
//   summary  launches are folded per (name, graph) in the current call window and written as
//            one KernelSummaryEvent each when the call ends: cheap enough to leave on;
//   full     every launch becomes one KernelEvent.
//
// Threading: one CpuProfiler per thread that executes calls (its state is unsynchronised so the
// hot path takes no lock); any number of them may share one RunWriter.
#pragma once
#include <cstdint>
#include <string_view>
#include <map>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/events.h"
#include "core/run_writer.h"
#include "profiler/launch_observer.h"
#include "profiler/profile_mode.h"

namespace tcprof {

// A kernel's interned identity; make it once (at codegen/load time), reuse it for every launch.
struct KernelKey {
  uint32_t name_id = 0;
  uint32_t kind_id = 0;
  uint32_t device_id = 0;
};

class CpuProfiler {
 public:
  // A null writer behaves like ProfileMode::Off. `stream` is this thread's index (KernelEvent).
  CpuProfiler(RunWriter* writer, ProfileMode mode, int32_t stream = 0);
  ~CpuProfiler();  // writes the aggregates of a window still open
  CpuProfiler(const CpuProfiler&) = delete;
  CpuProfiler& operator=(const CpuProfiler&) = delete;

  ProfileMode mode() const { return mode_; }
  bool enabled() const { return mode_ != ProfileMode::Off; }

  // Interns a kernel's name and kind ("generated", "extern", "fallback", "eager", "guard").
  KernelKey key(std::string_view name, std::string_view kind, std::string_view device = "cpu");

  // Launches timed from now on are announced to `observer` (the CUPTI collector in a CUDA run), or
  // to nobody when null. The observer must outlive this profiler's calls.
  void set_launch_observer(LaunchObserver* observer) { observer_ = observer; }

  // Opens the window of one call: launches recorded until end_call() carry `call_id`.
  void begin_call(Id call_id);
  // The call's own work is done: CUDA calls made from now on (the runtime waiting for the GPU to
  // time the call) are no longer attributed to it. The window stays open until end_call().
  void end_call_scope();
  // Closes the window; in summary mode writes one aggregate row per (name, graph) launched.
  void end_call();

  // Records one launch measured by the caller on tcprof::now_ns().
  void record(const KernelKey& key, Id graph_id, int64_t start_ns, int64_t duration_ns) {
    recorded_ns_ += duration_ns;
    if (mode_ == ProfileMode::Full) {
      record_full(key, graph_id, start_ns, duration_ns);
    } else if (mode_ == ProfileMode::Summary) {
      fold(key, graph_id, start_ns, duration_ns);
    }
  }

  // Times the scope it lives in: `{ auto t = profiler.time(key, graph); run_kernel(); }`.
  class Scope {
   public:
    Scope(CpuProfiler& p, const KernelKey& key, Id graph_id, bool exclusive = false)
        : profiler_(p.enabled() ? &p : nullptr), key_(key), graph_id_(graph_id),
          start_(profiler_ ? now_ns() : 0), nested_start_(exclusive && profiler_ ? p.recorded_ns_ : -1) {
      if (profiler_ && profiler_->observer_) profiler_->observer_->launch_begin(profiler_->call_id_, graph_id_);
    }
    ~Scope() {
      if (!profiler_) return;
      if (profiler_->observer_) profiler_->observer_->launch_end();
      int64_t nested = nested_start_ >= 0 ? profiler_->recorded_ns_ - nested_start_ : 0;
      profiler_->record(key_, graph_id_, start_, now_ns() - start_ - nested);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    CpuProfiler* profiler_;
    KernelKey key_;
    Id graph_id_;
    int64_t start_;
    int64_t nested_start_;  // -1: inclusive
  };
  Scope time(const KernelKey& key, Id graph_id) { return Scope(*this, key, graph_id); }
  // Times the scope's own work: launches timed inside it (a compiled backward's kernels, run by
  // LibTorch's autograd) are subtracted, so no time is counted twice.
  Scope time_exclusive(const KernelKey& key, Id graph_id) { return Scope(*this, key, graph_id, true); }

 private:
  struct Aggregate {
    Id graph_id = 0;
    uint32_t kind_id = 0, device_id = 0;
    int64_t first_start = 0, last_end = 0, count = 0, total = 0, min = 0, max = 0;
    double sum_sq = 0;
  };

  void record_full(const KernelKey& key, Id graph_id, int64_t start_ns, int64_t duration_ns);
  void fold(const KernelKey& key, Id graph_id, int64_t start_ns, int64_t duration_ns);
  static void add(Aggregate& a, int64_t start_ns, int64_t duration_ns);
  void write_aggregate(uint32_t name_id, const Aggregate& a);

  RunWriter* writer_;
  ProfileMode mode_;
  int32_t stream_;
  Id call_id_ = 0;
  int64_t recorded_ns_ = 0;  // every launch's duration, summed (for exclusive scopes)
  LaunchObserver* observer_ = nullptr;
  // Fast path: aggregates indexed by interned name id (small dense integers). A name launched
  // from a second graph in the same window goes to the overflow map.
  std::vector<Aggregate> by_name_;
  std::vector<uint32_t> touched_;  // name ids with a non-empty aggregate in this window
  std::map<std::pair<uint32_t, Id>, Aggregate> overflow_;  // (name id, graph id)
};

}  // namespace tcprof
