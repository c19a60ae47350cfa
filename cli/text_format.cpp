#include "cli/text_format.h"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

namespace tcprof::text {

std::string duration(double ns) {
  double a = std::fabs(ns);
  if (a < 1e3) return fmt::format("{:.0f} ns", ns);
  if (a < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  if (a < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

std::string count(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

std::string percent(double p) { return fmt::format("{:.1f}%", p); }

std::string plural(int64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", count(n), n == 1 ? one : many);
}

std::string fit(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  if (width == 0) return {};
  // Cut on a UTF-8 boundary.
  size_t cut = width - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "\u2026";
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string display_path(std::string_view file) {
  static const std::string cwd = [] {
    std::error_code ec;
    std::string dir = std::filesystem::current_path(ec).string();
    return ec ? std::string() : dir + "/";
  }();
  if (!cwd.empty() && file.size() > cwd.size() && file.substr(0, cwd.size()) == cwd) {
    return std::string(file.substr(cwd.size()));
  }
  return std::string(file);
}

std::string location(std::string_view raw_file, int line, int col) {
  if (raw_file.empty()) return "<unknown>";
  std::string file = display_path(raw_file);
  if (line <= 0) return std::string(file);
  if (col <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, col);
}

}  // namespace tcprof::text
