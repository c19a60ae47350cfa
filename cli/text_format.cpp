#include "cli/text_format.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
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

std::string bytes(int64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n) / 1024.0;
  int u = 0;
  while (v >= 1024.0 && u < 3) v /= 1024.0, ++u;
  return fmt::format(v < 10 ? "{:.2f} {}" : v < 100 ? "{:.1f} {}" : "{:.0f} {}", v, units[u]);
}

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

size_t terminal_width() {
  if (const char* env = std::getenv("COLUMNS")) {
    int n = std::atoi(env);
    if (n >= 20) return static_cast<size_t>(n);
  }
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return 100;
}

size_t columns(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string wrap(std::string_view prefix, std::string_view s, size_t width) {
  const std::string indent(columns(prefix), ' ');
  std::string out(prefix), line_indent = indent;
  size_t used = columns(prefix);
  bool line_has_word = false;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t end = s.find(' ', i);
    if (end == std::string_view::npos) end = s.size();
    if (end == i) break;
    std::string_view word = s.substr(i, end - i);
    size_t need = columns(word) + (line_has_word ? 1 : 0);
    if (line_has_word && used + need > width) {
      out += "\n" + line_indent;
      used = indent.size();
      line_has_word = false;
      need = columns(word);
    }
    if (line_has_word) out += ' ';
    out += word;
    used += need;
    line_has_word = true;
    i = end;
  }
  out += '\n';
  return out;
}

std::string call_timing(const analysis::CallTiming& t) {
  std::string mean = duration(t.mean_incl_compile_ns);
  if (!t.has_steady()) return fmt::format("mean incl. compile {}/call (every call compiled)", mean);
  return fmt::format("steady median {}/call · mean incl. compile {}", duration(t.steady_median_ns), mean);
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
