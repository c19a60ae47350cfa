#include <gtest/gtest.h>

#include "core/log.h"

namespace tcprof {
namespace {

TEST(LogChannels, ParsesCommaListLikeTorchLogs) {
  auto c = parse_log_channels("graph_breaks,recompiles");
  EXPECT_EQ(c.mask, static_cast<uint32_t>(LogChannel::GraphBreaks) |
                        static_cast<uint32_t>(LogChannel::Recompiles));
  EXPECT_TRUE(c.unknown.empty());
}

TEST(LogChannels, AcceptsPlusPrefixSpacesAndAll) {
  EXPECT_EQ(parse_log_channels("+guards perf_hints").mask,
            static_cast<uint32_t>(LogChannel::Guards) | static_cast<uint32_t>(LogChannel::PerfHints));
  auto all = parse_log_channels("all");
  for (auto name : all_channel_names()) {
    EXPECT_NE(parse_log_channels(name).mask & all.mask, 0u) << name;
  }
}

TEST(LogChannels, ReportsUnknownNames) {
  auto c = parse_log_channels("graph_breaks,bogus,,");
  EXPECT_EQ(c.mask, static_cast<uint32_t>(LogChannel::GraphBreaks));
  ASSERT_EQ(c.unknown.size(), 1u);
  EXPECT_EQ(c.unknown[0], "bogus");
}

TEST(LogChannels, EnabledFollowsMask) {
  set_log_mask(static_cast<uint32_t>(LogChannel::OutputCode));
  EXPECT_TRUE(log_enabled(LogChannel::OutputCode));
  EXPECT_FALSE(log_enabled(LogChannel::Guards));
  set_log_mask(0);
  EXPECT_FALSE(log_enabled(LogChannel::OutputCode));
}

}  // namespace
}  // namespace tcprof
