// The one clock every timestamp in a run uses: steady, monotonic nanoseconds. Profiler timings,
// store timestamps and CUPTI-aligned GPU times are all expressed on it.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace tcprof {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Wall-clock time as ISO-8601 UTC, for runs.started_at.
std::string iso8601_utc_now();

}  // namespace tcprof
