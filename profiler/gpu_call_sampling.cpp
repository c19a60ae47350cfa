#include "profiler/gpu_call_sampling.h"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"

namespace tcprof {

GpuSamplingPolicy gpu_sampling_policy(ProfileMode mode, const char* every_env) {
  GpuSamplingPolicy policy;
  if (mode != ProfileMode::Summary) {
    policy.every = 1;
    return policy;
  }
  if (!every_env || !*every_env) return policy;
  const std::string_view text(every_env);
  int64_t every = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), every);
  if (ec != std::errc() || end != text.data() + text.size() || every < 1) {
    throw Error(ErrorKind::Usage,
                fmt::format("TCPROF_SUMMARY_GPU_EVERY='{}': expected a whole number of calls, at least 1 (--profile "
                            "summary records GPU work on the first {} calls, then on one call in that many; 1 records "
                            "every call; unset it for one in {})",
                            text, policy.first_calls, policy.every));
  }
  policy.every = every;
  return policy;
}

GpuSamplingPolicy gpu_sampling_policy(ProfileMode mode) {
  return gpu_sampling_policy(mode, std::getenv("TCPROF_SUMMARY_GPU_EVERY"));
}

bool GpuCallSampling::call_begin(Id call_id) {
  if (call_id == last_call_ && calls_ > 0) return last_recorded_;
  ++calls_;
  last_call_ = call_id;
  last_recorded_ = sampled(calls_);
  if (last_recorded_) ++recorded_;
  return last_recorded_;
}

bool GpuCallSampling::records_new_graph(Id graph_id) {
  if (last_recorded_ || calls_ == 0 || recorded_graphs_.count(graph_id) > 0) return false;
  last_recorded_ = true;
  ++recorded_;
  return true;
}

}  // namespace tcprof
