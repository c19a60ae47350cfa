// Recompiles: per frame, the calls coloured by the cache entry that served them with recompiles
// marked; the list of recompiles; for the selected one every guard failure (expected vs actual)
// and the user line that created the guard; the input sizes per dimension over the calls.
#pragma once
#include <QComboBox>
#include <QLabel>
#include <QTableView>

#include "gui/call_timeline.h"
#include "gui/run_view.h"
#include "gui/shape_chart.h"
#include "gui/source_view.h"
#include "gui/table_model.h"

namespace tcprof::gui {

class RecompilesView : public RunView {
  Q_OBJECT
 public:
  explicit RecompilesView(QWidget* parent = nullptr);
  void setRun(const RunDataPtr& run) override;

  QComboBox* frameSelector() const { return frames_; }
  QTableView* recompileTable() const { return recompile_table_; }
  QTableView* failureTable() const { return failure_table_; }
  TableModel* recompileModel() const { return recompile_model_; }
  TableModel* failureModel() const { return failure_model_; }
  CallTimeline* callTimeline() const { return timeline_; }
  ShapeChart* shapeChart() const { return chart_; }
  SourceView* source() const { return source_; }

 private:
  void showFrame(int index);
  void showRecompile(int row);
  void showGuardSource(const GuardFailureRow& failure);

  QComboBox* frames_;
  QLabel* legend_;
  CallTimeline* timeline_;
  TableModel* recompile_model_;
  TableModel* failure_model_;
  QTableView* recompile_table_;
  QTableView* failure_table_;
  SourceView* source_;
  ShapeChart* chart_;
  std::vector<const RecompileRow*> shown_;  // rows of recompile_model_
};

}  // namespace tcprof::gui
