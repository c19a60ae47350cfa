#include "gui/timeline_ruler.h"

#include <algorithm>
#include <cmath>

namespace tcprof::gui::timeline {

// Tick spacing of 1, 2 or 5 × 10^k ns, at least `min_px` apart.
double nice_step(double ns_per_px, double min_px) {
  const double raw = ns_per_px * min_px;
  const double base = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (base * m >= raw) return base * m;
  }
  return base * 10;
}

// In the unit of the value, with as many decimals as the tick spacing needs, so neighbouring
// ticks never read the same (20 µs ticks one second in: "1.13002 s", "1.13004 s").
QString tick_label(double ns, double step) {
  if (std::fabs(ns) < step / 2) return "0";
  struct Unit {
    double scale;
    const char* name;
  };
  static const Unit units[] = {{1e9, " s"}, {1e6, " ms"}, {1e3, " µs"}, {1, " ns"}};
  const Unit* unit = &units[3];
  for (const Unit& u : units) {
    if (step >= u.scale) {
      unit = &u;
      break;
    }
  }
  // Use the unit of the value when it is larger, with decimals down to the step.
  for (const Unit& u : units) {
    if (std::fabs(ns) >= u.scale) {
      const int decimals = std::clamp(static_cast<int>(std::ceil(std::log10(u.scale / step) - 1e-9)), 0, 9);
      return QString::number(ns / u.scale, 'f', decimals) + QString::fromUtf8(u.name);
    }
  }
  return QString::number(ns / unit->scale, 'f', 0) + QString::fromUtf8(unit->name);
}

}  // namespace tcprof::gui::timeline
