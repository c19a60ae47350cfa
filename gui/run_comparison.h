// Comparing two runs in the GUI. What changed (break sites, recompiles per frame, kernel time) is
// analysis/run_comparison.h, the same computation as `tcprof diff`; this adds the table of
// headline figures the Compare view shows beside it. Pure data, so tests check it without widgets.
#pragma once
#include <QString>
#include <vector>

#include "analysis/run_comparison.h"
#include "gui/run_data.h"

namespace tcprof::gui {

struct CountChange {
  QString metric;
  double a = 0, b = 0;
  bool lower_is_better = true;
  bool is_time_ms = false;
};

struct RunComparison {
  analysis::RunComparison changes;
  std::vector<CountChange> counts;
  int added() const { return static_cast<int>(changes.count(analysis::SiteChange::Kind::Added)); }
  int removed() const { return static_cast<int>(changes.count(analysis::SiteChange::Kind::Removed)); }
};

RunComparison compare_runs(const RunData& a, const RunData& b);

}  // namespace tcprof::gui
