// Training: loss and step time per step on one chart (two value axes), with the steps where a
// recompile happened marked by red vertical lines.
#pragma once
#include <QLabel>
#include <QtCharts/QChartView>

#include "gui/run_view.h"

namespace tcprof::gui {

class TrainingView : public RunView {
  Q_OBJECT
 public:
  explicit TrainingView(QWidget* parent = nullptr);
  void setRun(const RunDataPtr& run) override;
  QChartView* chartView() const { return view_; }
  // Steps marked as having a recompile, for tests.
  const std::vector<int64_t>& recompileSteps() const { return recompile_steps_; }
  QString summaryText() const { return summary_->text(); }

 private:
  QChartView* view_;
  QLabel* summary_;
  std::vector<int64_t> recompile_steps_;
};

}  // namespace tcprof::gui
