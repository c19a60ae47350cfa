// Times one compile phase (capture, decompose, lower, schedule, codegen, cc, load, ...) of one
// compile id on the shared clock. Phases are rare and cheap to record, so they are recorded in
// every --profile mode; a null writer makes the timer a no-op.
#pragma once
#include <string>
#include <utility>

#include "core/clock.h"
#include "core/events.h"
#include "core/run_writer.h"

namespace tcprof {

class ScopedCompilePhase {
 public:
  ScopedCompilePhase(RunWriter* writer, Id compile_id, std::string phase)
      : writer_(writer), event_{compile_id, std::move(phase), writer ? now_ns() : 0, 0} {}
  ~ScopedCompilePhase() {
    if (!writer_) return;
    event_.duration_ns = now_ns() - event_.start_ns;
    writer_->record(std::move(event_));
  }
  ScopedCompilePhase(const ScopedCompilePhase&) = delete;
  ScopedCompilePhase& operator=(const ScopedCompilePhase&) = delete;

 private:
  RunWriter* writer_;
  CompilePhaseEvent event_;
};

}  // namespace tcprof
