// Formatting helpers for tcprof's terminal output: human units, and free text (reasons, hints,
// source lines, file:line) wrapped to the terminal's width, never cut.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/call_timing.h"

namespace tcprof::text {

std::string duration(double ns);          // "812 ns", "12.4 us", "3.21 ms", "1.52 s"
std::string count(int64_t n);             // "1,234,567"
std::string percent(double p);            // "12.3%"
std::string bytes(int64_t n);             // "812 B", "4.0 KiB", "12.5 MiB", "1.25 GiB"
std::string plural(int64_t n, std::string_view one, std::string_view many);  // "1 site", "2 sites"
// Cuts `s` to `width` columns, ending in "…" when cut. For table cells only: free text wraps.
std::string fit(std::string_view s, size_t width);

// The width output wraps to: $COLUMNS when set, else the terminal's when stdout is one, else 100
// (logs, pipes, CI).
size_t terminal_width();
// Columns `s` takes (UTF-8 code points).
size_t columns(std::string_view s);
// `prefix` then `s` word-wrapped to `width` columns, continuation lines indented to the prefix's
// width; every line ends in '\n'. A word longer than a line (a path with its :line) is never cut:
// it gets a line of its own.
std::string wrap(std::string_view prefix, std::string_view s, size_t width = terminal_width());
// "steady median 51.7 us/call · mean incl. compile 1.02 ms" (analysis/call_timing.h)
std::string call_timing(const analysis::CallTiming& t);
// Strips leading and trailing white space (source lines are shown without their indentation).
std::string trim(std::string_view s);
// "file:line" or "file:line:col"; "<unknown>" when no file is known. Files under the current
// directory are shown relative to it.
std::string location(std::string_view file, int line, int col = 0);
std::string display_path(std::string_view file);

}  // namespace tcprof::text
