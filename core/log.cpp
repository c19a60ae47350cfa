#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace tcprof {
namespace {

struct ChannelName {
  LogChannel channel;
  std::string_view name;
};
constexpr ChannelName kChannels[] = {
    {LogChannel::GraphBreaks, "graph_breaks"}, {LogChannel::Recompiles, "recompiles"},
    {LogChannel::Guards, "guards"},            {LogChannel::PerfHints, "perf_hints"},
    {LogChannel::OutputCode, "output_code"},   {LogChannel::Passes, "passes"},
    {LogChannel::Fusion, "fusion"},            {LogChannel::Autotune, "autotune"},
};

uint32_t mask_from_environment() {
  const char* env = std::getenv("TCPROF_LOGS");
  if (!env || !*env) return 0;
  LogConfig config = parse_log_channels(env);
  for (const auto& name : config.unknown) {
    std::string valid;
    for (auto n : all_channel_names()) valid += std::string(valid.empty() ? "" : ", ") + std::string(n);
    std::fprintf(stderr, "tcprof: TCPROF_LOGS: unknown channel '%s' (known: %s, all)\n",
                 name.c_str(), valid.c_str());
  }
  return config.mask;
}

std::atomic<uint32_t>& mask() {
  static std::atomic<uint32_t> value{mask_from_environment()};
  return value;
}

std::mutex& output_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

LogConfig parse_log_channels(std::string_view spec) {
  LogConfig config;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t end = spec.find_first_of(", ", pos);
    if (end == std::string_view::npos) end = spec.size();
    std::string_view item = spec.substr(pos, end - pos);
    if (!item.empty() && item.front() == '+') item.remove_prefix(1);  // TORCH_LOGS allows "+name"
    if (!item.empty()) {
      bool found = false;
      if (item == "all") {
        for (const auto& c : kChannels) config.mask |= static_cast<uint32_t>(c.channel);
        found = true;
      }
      for (const auto& c : kChannels) {
        if (c.name == item) {
          config.mask |= static_cast<uint32_t>(c.channel);
          found = true;
        }
      }
      if (!found) config.unknown.emplace_back(item);
    }
    pos = end + 1;
  }
  return config;
}

std::string_view channel_name(LogChannel channel) {
  for (const auto& c : kChannels) {
    if (c.channel == channel) return c.name;
  }
  return "log";
}

std::vector<std::string_view> all_channel_names() {
  std::vector<std::string_view> out;
  for (const auto& c : kChannels) out.push_back(c.name);
  return out;
}

void set_log_mask(uint32_t value) { mask().store(value, std::memory_order_relaxed); }

bool log_enabled(LogChannel channel) {
  return (mask().load(std::memory_order_relaxed) & static_cast<uint32_t>(channel)) != 0;
}

void log_write(LogChannel channel, std::string_view message) {
  std::lock_guard<std::mutex> lock(output_mutex());
  std::string_view name = channel_name(channel);
  // Multi-line messages (IR, code) keep the prefix on the first line only.
  std::fprintf(stderr, "[tcprof:%.*s] %.*s\n", static_cast<int>(name.size()), name.data(),
               static_cast<int>(message.size()), message.data());
}

}  // namespace tcprof
