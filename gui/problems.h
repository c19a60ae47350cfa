// The "three biggest problems" of a run, in plain words, each pointing at the view that shows
// it. Ranked by a rough cost estimate so the most expensive issue comes first.
#pragma once
#include <QString>
#include <vector>

#include "gui/run_data.h"

namespace tcprof::gui {

struct Problem {
  double score = 0;  // higher = worse
  QString title;     // one short line
  QString detail;    // one or two sentences, plain text
  QString view;      // "breaks", "recompiles", "kernels", "graphs", "training"
};

std::vector<Problem> find_problems(const RunData& run, size_t limit = 3);

}  // namespace tcprof::gui
