// CPU timing of one executed unit (a generated kernel, an extern call, an eager op): measures it
// on the shared clock and hands a KernelEvent to the run's writer when it ends.
#pragma once
#include "core/clock.h"
#include "core/events.h"
#include "core/run_writer.h"

namespace tcprof {

class ScopedKernelTimer {
 public:
  // `event` carries the attribution (call, graph, interned name/kind/device); the timer fills in
  // start and duration. A null writer makes the timer a no-op.
  ScopedKernelTimer(RunWriter* writer, const KernelEvent& event)
      : writer_(writer), event_(event) {
    if (writer_) event_.start_ns = now_ns();
  }
  ~ScopedKernelTimer() {
    if (!writer_) return;
    event_.duration_ns = now_ns() - event_.start_ns;
    writer_->record(event_);
  }
  ScopedKernelTimer(const ScopedKernelTimer&) = delete;
  ScopedKernelTimer& operator=(const ScopedKernelTimer&) = delete;

 private:
  RunWriter* writer_;
  KernelEvent event_;
};

}  // namespace tcprof
