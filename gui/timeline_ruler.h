// The timeline's time ruler: tick spacing and labels precise enough for the zoom level.
#pragma once
#include <QString>

namespace tcprof::gui::timeline {

// Tick spacing of 1, 2 or 5 × 10^k ns, at least `min_px` pixels apart.
double nice_step(double ns_per_px, double min_px);
// The label of a tick `ns` after the run start, with the decimals the spacing `step` needs.
QString tick_label(double ns, double step);

}  // namespace tcprof::gui::timeline
