// Every run on a GPU records its kernels through CUPTI: one way to start that for the CLI and the
// C++ API alike.
#pragma once
#include <memory>
#include <string>

#include "profiler/launch_observer.h"
#include "profiler/profile_mode.h"

namespace tcprof {

class RunWriter;

// Starts recording GPU work into `writer` (the CUPTI collector, announced launches then carry
// their call and graph). Null, with `why` saying so, when it cannot: this build has no CUPTI, or
// libcupti or the driver cannot be loaded. The run goes on without GPU kernels then.
std::shared_ptr<LaunchObserver> start_gpu_recording(RunWriter& writer, ProfileMode mode, std::string* why);

}  // namespace tcprof
