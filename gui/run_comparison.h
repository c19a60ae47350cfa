// What changed between two runs: break sites added and removed, counts side by side, and kernel
// time per name. Pure data, so tests check it without widgets.
#pragma once
#include <QString>
#include <vector>

#include "gui/run_data.h"

namespace tcprof::gui {

struct BreakChange {
  enum Kind { Added, Removed, Both } kind = Both;
  BreakSite site;  // from B when present there, else from A
  int64_t count_a = 0, count_b = 0;
};

struct CountChange {
  QString metric;
  double a = 0, b = 0;
  bool lower_is_better = true;
  bool is_time_ms = false;
};

struct KernelChange {
  QString name;
  int64_t total_a = 0, total_b = 0, instances_a = 0, instances_b = 0;
  int64_t delta() const { return total_b - total_a; }
};

struct RunComparison {
  std::vector<CountChange> counts;
  std::vector<BreakChange> breaks;    // added first, then removed, then unchanged
  std::vector<KernelChange> kernels;  // largest absolute time change first
  int added() const;
  int removed() const;
};

RunComparison compare_runs(const RunData& a, const RunData& b);

}  // namespace tcprof::gui
