#include <gtest/gtest.h>

#include "cli/text_format.h"

namespace tcprof::text {
namespace {

TEST(TextFormat, Durations) {
  EXPECT_EQ(duration(812), "812 ns");
  EXPECT_EQ(duration(12'400), "12.4 us");
  EXPECT_EQ(duration(3'210'000), "3.21 ms");
  EXPECT_EQ(duration(1'520'000'000), "1.52 s");
}

TEST(TextFormat, CountsHaveThousandsSeparators) {
  EXPECT_EQ(count(0), "0");
  EXPECT_EQ(count(999), "999");
  EXPECT_EQ(count(1000), "1,000");
  EXPECT_EQ(count(1234567), "1,234,567");
  EXPECT_EQ(count(-1234), "-1,234");
}

TEST(TextFormat, FitCutsOnCharacterBoundary) {
  EXPECT_EQ(fit("short", 10), "short");
  EXPECT_EQ(fit("abcdefghij", 5), "abcd\u2026");
  EXPECT_EQ(fit("\u00e9\u00e9\u00e9", 2), "\u2026");  // never splits a UTF-8 sequence
}

TEST(TextFormat, LocationAndPlural) {
  EXPECT_EQ(location("m.py", 3, 7), "m.py:3:7");
  EXPECT_EQ(location("m.py", 3), "m.py:3");
  EXPECT_EQ(location("", 3), "<unknown>");
  EXPECT_EQ(plural(1, "site", "sites"), "1 site");
  EXPECT_EQ(plural(2, "site", "sites"), "2 sites");
  EXPECT_EQ(trim("   if x:  \n"), "if x:");
}

}  // namespace
}  // namespace tcprof::text
