// Compile time: where each compile's time went (Dynamo, AOTAutograd, Inductor, the C++/NVRTC
// compile, autotuning) as stacked bars and a table, the compile caches' hits and misses, and what
// repeats (a graph compiled again, blocks repeated inside one graph) with what it costs. Every
// figure is analysis/compile_time.h's, as `report` prints it.
#pragma once
#include <QLabel>
#include <QTableView>
#include <QtCharts/QChartView>

#include "gui/run_view.h"
#include "gui/table_model.h"

namespace tcprof::gui {

class CompileTimeView : public RunView {
  Q_OBJECT
 public:
  // Bars for at most this many compiles (the longest, in compile order); the table has them all.
  static constexpr int kMaxBars = 24;

  explicit CompileTimeView(QWidget* parent = nullptr);
  void setRun(const RunDataPtr& run) override;

  QString summaryText() const { return summary_->text(); }
  QChartView* chartView() const { return chart_; }
  TableModel* compileModel() const { return compile_model_; }
  TableModel* repeatModel() const { return repeat_model_; }
  QTableView* compileTable() const { return compile_table_; }

 private:
  void showChart();

  QLabel* summary_;
  QChartView* chart_;
  TableModel* compile_model_;
  TableModel* repeat_model_;
  QTableView* compile_table_;
};

}  // namespace tcprof::gui
