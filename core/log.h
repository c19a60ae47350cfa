// TCPROF_LOGS: opt-in event logs on stderr, in the spirit of TORCH_LOGS.
//   TCPROF_LOGS=graph_breaks,recompiles tcprof run model.pt ...
// Channels are read once from the environment; tcprof::log() is a cheap no-op when a channel is off.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace tcprof {

enum class LogChannel : uint32_t {
  GraphBreaks = 1u << 0,
  Recompiles = 1u << 1,
  Guards = 1u << 2,
  PerfHints = 1u << 3,
  OutputCode = 1u << 4,
  Passes = 1u << 5,  // IR after each compiler pass
  Fusion = 1u << 6,  // why the fusion scheduler kept two ops in separate kernels
  Autotune = 1u << 7,  // each launch size a generated CUDA kernel chose on the device, and its times
};

struct LogConfig {
  uint32_t mask = 0;
  std::vector<std::string> unknown;  // names that are not channels, reported once
};

// Parses a comma (or space) separated list; "all" enables every channel.
LogConfig parse_log_channels(std::string_view spec);
std::string_view channel_name(LogChannel channel);
std::vector<std::string_view> all_channel_names();

// Replaces the channels read from TCPROF_LOGS (for tests and the --logs flag).
void set_log_mask(uint32_t mask);
bool log_enabled(LogChannel channel);
void log_write(LogChannel channel, std::string_view message);

template <typename... Args>
void log(LogChannel channel, fmt::format_string<Args...> format, Args&&... args) {
  if (!log_enabled(channel)) return;
  log_write(channel, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace tcprof
