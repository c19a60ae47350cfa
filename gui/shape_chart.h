// Sizes seen per input dimension over a frame's calls (from calls.input_shapes JSON): the
// dimensions that change are what forces recompiles and what `--dynamic I:D` should mark.
#pragma once
#include <QtCharts/QChartView>
#include <vector>

#include "gui/run_data.h"

namespace tcprof::gui {

class ShapeChart : public QChartView {
  Q_OBJECT
 public:
  explicit ShapeChart(QWidget* parent = nullptr);
  void setCalls(const RunDataPtr& run, Id frame_id);
  // Names of the plotted series ("input 0 · dim 1"), for tests.
  QStringList seriesNames() const;
};

}  // namespace tcprof::gui
