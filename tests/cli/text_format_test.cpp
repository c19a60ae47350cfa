#include <gtest/gtest.h>

#include <cstdlib>

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

TEST(TextFormat, BytesInBinaryUnits) {
  EXPECT_EQ(bytes(0), "0 B");
  EXPECT_EQ(bytes(1023), "1023 B");
  EXPECT_EQ(bytes(4096), "4.00 KiB");
  EXPECT_EQ(bytes(13'107'200), "12.5 MiB");
  EXPECT_EQ(bytes(int64_t{3} << 30), "3.00 GiB");
  EXPECT_EQ(bytes(int64_t{500} << 20), "500 MiB");
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

TEST(TextFormat, WrapKeepsWordsWholeAndIndentsContinuations) {
  EXPECT_EQ(wrap("  hint: ", "use torch.where instead", 80), "  hint: use torch.where instead\n");
  EXPECT_EQ(wrap("  hint: ", "aaaa bbbb cccc", 16), "  hint: aaaa\n        bbbb\n        cccc\n");
  // A path with its line number is one word: it overflows rather than losing the number.
  EXPECT_EQ(wrap("at ", "/a/very/long/path/model.py:123", 12), "at /a/very/long/path/model.py:123\n");
  EXPECT_EQ(wrap("  x ", "", 80), "  x \n");
  EXPECT_EQ(columns("\u00e9t\u00e9"), 3u);
}

TEST(TextFormat, WidthFollowsColumnsElse100) {
  setenv("COLUMNS", "250", 1);
  EXPECT_EQ(terminal_width(), 250u);
  unsetenv("COLUMNS");
  EXPECT_EQ(terminal_width(), 100u);  // ctest's stdout is not a terminal
}

TEST(TextFormat, CallTimingIsLabelled) {
  analysis::CallTiming t;
  t.calls = 10;
  t.steady_calls = 9;
  t.steady_median_ns = 51'700;
  t.mean_incl_compile_ns = 1'020'000;
  EXPECT_EQ(call_timing(t), "steady median 51.7 us/call \u00b7 mean incl. compile 1.02 ms");
  t.steady_calls = 0;
  EXPECT_EQ(call_timing(t), "mean incl. compile 1.02 ms/call (every call compiled)");
}

}  // namespace
}  // namespace tcprof::text
