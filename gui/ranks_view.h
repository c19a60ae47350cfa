// Ranks: the runs of one multi-rank import side by side (what each rank compiled) and where
// they diverge, as report prints it from analysis::rank_divergence. Ranks that compiled
// differently are the usual cause of collective hangs and uneven step times. Activating a rank's
// row shows that rank (the same as the rank selector above the tabs).
#pragma once
#include <QLabel>
#include <QTableView>

#include "gui/run_view.h"
#include "gui/table_model.h"

namespace tcprof::gui {

class RanksView : public RunView {
  Q_OBJECT
 public:
  explicit RanksView(QWidget* parent = nullptr);
  void setRun(const RunDataPtr& run) override;

  TableModel* rankModel() const { return rank_model_; }
  TableModel* divergenceModel() const { return divergence_model_; }
  QTableView* rankTable() const { return rank_table_; }
  QString summaryText() const { return summary_->text(); }

 signals:
  // The user asked to see another rank's run (same file).
  void rankChosen(tcprof::Id run_id);

 private:
  QLabel* summary_;
  TableModel* rank_model_;
  TableModel* divergence_model_;
  QTableView* rank_table_;
};

}  // namespace tcprof::gui
