// Told when a call starts and ends, and when a timed launch in it starts and ends (with its call
// and graph).
//
// The CUPTI collector is one: it tags the CUDA calls made inside a launch (and so the GPU work
// they start) with the launch's call and graph, and flushes at call boundaries, so a GPU kernel is
// attributed exactly like the CPU time around its launch. The CPU profiler needs no CUDA for this.
#pragma once
#include "core/events.h"

namespace tcprof {

class LaunchObserver {
 public:
  virtual ~LaunchObserver() = default;
  // A call's window opens: CUDA calls made in it outside every launch (a compile's capture run,
  // eager code) carry the call with graph 0; those before it (the inputs' copies) carry none.
  virtual void call_begin(Id call_id) = 0;
  // The call's own CUDA work is queued: what follows until call_end (waiting for the GPU to time
  // the call) is not the call's API time.
  virtual void call_scope_end() = 0;
  virtual void launch_begin(Id call_id, Id graph_id) = 0;
  virtual void launch_end() = 0;
  virtual void call_end() = 0;
};

}  // namespace tcprof
