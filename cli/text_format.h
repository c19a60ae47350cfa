// Formatting helpers for tcprof's terminal output (80 columns, human units).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace tcprof::text {

std::string duration(double ns);          // "812 ns", "12.4 us", "3.21 ms", "1.52 s"
std::string count(int64_t n);             // "1,234,567"
std::string percent(double p);            // "12.3%"
std::string plural(int64_t n, std::string_view one, std::string_view many);  // "1 site", "2 sites"
// Cuts `s` to `width` columns, ending in "…" when cut.
std::string fit(std::string_view s, size_t width);
// Strips leading and trailing white space (source lines are shown without their indentation).
std::string trim(std::string_view s);
// "file:line" or "file:line:col"; "<unknown>" when no file is known. Files under the current
// directory are shown relative to it.
std::string location(std::string_view file, int line, int col = 0);
std::string display_path(std::string_view file);

}  // namespace tcprof::text
