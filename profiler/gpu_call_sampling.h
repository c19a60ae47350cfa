// Which calls of a `--profile summary` run record their GPU work through CUPTI. On the H200,
// CUPTI's kernel records alone cost about 10% of a GPT call that LibTorch runs op by op (each of
// its ~120 launches waits on CUPTI), so no choice of records brings summary under 3% if every call
// is recorded. Summary records the first calls of a run whole, then one call in N; every call is
// still timed (CUDA events) and its host kernels still folded. `--profile full` records every call.
//
// GpuCallSampling is the decision alone, with no CUPTI: the collector asks it at each call and
// launch and switches CUPTI's records on or off as it answers (docs/gpu.md, "What recording costs").
#pragma once
#include <cstdint>
#include <unordered_set>

#include "core/events.h"
#include "profiler/profile_mode.h"

namespace tcprof {

struct GpuSamplingPolicy {
  int64_t first_calls = 10;  // recorded whole: short runs, warm-up and the first compiles
  int64_t every = 20;        // then one call in `every` (1: every call)
  bool records_every_call() const { return every <= 1; }
};

// Full: every call. Summary: the defaults, with `every` from TCPROF_SUMMARY_GPU_EVERY when set
// (a positive integer; anything else is a usage error naming the variable).
GpuSamplingPolicy gpu_sampling_policy(ProfileMode mode, const char* every_env);
// The same with `every_env` read from the environment: what every recording uses.
GpuSamplingPolicy gpu_sampling_policy(ProfileMode mode);

class GpuCallSampling {
 public:
  explicit GpuCallSampling(GpuSamplingPolicy policy = {}) : policy_(policy) {}

  // A call opens: whether its GPU work is recorded. A call id seen again (a training step's
  // backward and optimizer step reopen its forward's call) keeps its first answer.
  bool call_begin(Id call_id);
  // A graph launches in a call that is not recorded: true when the graph has never been recorded
  // (a recompile's new graph), so the rest of the call is. The call then counts as recorded.
  bool records_new_graph(Id graph_id);
  // A graph launched while recording: later calls need not record it for being new.
  void graph_recorded(Id graph_id) {
    if (!policy_.records_every_call()) recorded_graphs_.insert(graph_id);
  }

  // Whether the next new call will be recorded (the collector switches CUPTI on before it).
  bool next_call_recorded() const { return sampled(calls_ + 1); }

  int64_t calls_recorded() const { return recorded_; }
  int64_t calls_skipped() const { return calls_ - recorded_; }
  const GpuSamplingPolicy& policy() const { return policy_; }

 private:
  bool sampled(int64_t ordinal) const {
    return policy_.records_every_call() || ordinal <= policy_.first_calls ||
           (ordinal - policy_.first_calls) % policy_.every == 0;
  }
  GpuSamplingPolicy policy_;
  int64_t calls_ = 0, recorded_ = 0;
  Id last_call_ = 0;
  bool last_recorded_ = false;
  std::unordered_set<Id> recorded_graphs_;
};

}  // namespace tcprof
