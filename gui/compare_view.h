// Compare: two runs side by side (two open files, or two runs in one file): counts with deltas,
// break sites added/removed, kernel time per name. Loads the runs it needs with its own
// DbLoader, off the UI thread.
#pragma once
#include <QComboBox>
#include <QLabel>
#include <QMap>
#include <QTableView>

#include "gui/db_loader.h"
#include "gui/run_comparison.h"
#include "gui/run_view.h"
#include "gui/table_model.h"

namespace tcprof::gui {

struct RunKey {
  QString path;
  Id run_id = 0;
  QString title;
  bool operator==(const RunKey& o) const { return path == o.path && run_id == o.run_id; }
};

class CompareView : public RunView {
  Q_OBJECT
 public:
  explicit CompareView(QWidget* parent = nullptr);
  // Runs the user can pick from (every run of every open file).
  void setAvailableRuns(const QVector<RunKey>& runs);
  // The selected run becomes A; B defaults to another available run.
  void setRun(const RunDataPtr& run) override;
  void comparePair(int a_index, int b_index);
  bool isLoading() const { return loader_->pending() > 0; }

  TableModel* countModel() const { return count_model_; }
  TableModel* breakModel() const { return break_model_; }
  TableModel* kernelModel() const { return kernel_model_; }
  QComboBox* runA() const { return a_; }
  QComboBox* runB() const { return b_; }

 signals:
  void comparisonReady();

 private:
  void request();
  void show(const RunData& a, const RunData& b);
  RunDataPtr cached(const RunKey& key) const;

  DbLoader* loader_;
  QVector<RunKey> runs_;
  QMap<QString, RunDataPtr> cache_;  // "path\nid" -> data
  QComboBox* a_;
  QComboBox* b_;
  QLabel* headline_;
  TableModel* count_model_;
  TableModel* break_model_;
  TableModel* kernel_model_;
};

}  // namespace tcprof::gui
