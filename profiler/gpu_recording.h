// Every run on a GPU records its kernels through CUPTI: one way to start that for the CLI and the
// C++ API alike.
#pragma once
#include <memory>
#include <string>

#include "profiler/gpu_call_sampling.h"
#include "profiler/launch_observer.h"
#include "profiler/profile_mode.h"

namespace tcprof {

class RunWriter;

// Starts recording GPU work into `writer` (the CUPTI collector, announced launches then carry
// their call and graph). Null, with `why` saying so, when it cannot: this build has no CUPTI, or
// libcupti or the driver cannot be loaded. The run goes on without GPU kernels then. `sampling`:
// which calls are recorded, kept across recordings (null: the mode's policy, from this one's first
// call; gpu_call_sampling.h). Throws Error(Usage) for a bad TCPROF_SUMMARY_GPU_EVERY.
std::shared_ptr<LaunchObserver> start_gpu_recording(RunWriter& writer, ProfileMode mode, std::string* why,
                                                    std::shared_ptr<GpuCallSampling> sampling = nullptr);

}  // namespace tcprof
