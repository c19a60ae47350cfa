#include "analysis/duration_text.h"

#include <cmath>

#include <fmt/format.h>

namespace tcprof::analysis {

std::string duration_text(double ns) {
  auto three_digits = [](double v, const char* unit) {
    return fmt::format("{:.{}f} {}", v, v >= 100 ? 0 : (v >= 10 ? 1 : 2), unit);
  };
  if (std::fabs(ns) < 1e3) return fmt::format("{:.0f} ns", ns);
  if (std::fabs(ns) < 1e6) return three_digits(ns / 1e3, "us");
  if (std::fabs(ns) < 1e9) return three_digits(ns / 1e6, "ms");
  return three_digits(ns / 1e9, "s");
}

}  // namespace tcprof::analysis
