// Kernels: the timeline above, the nsys-style summary below. Selecting a kernel in either one
// selects it in the other; a time range selected on the timeline (Shift+drag) filters the table.
#pragma once
#include <QLabel>
#include <QComboBox>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>

#include "gui/kernel_table_model.h"
#include "gui/kernel_timeline.h"
#include "gui/run_view.h"

namespace tcprof::gui {

class KernelsView : public RunView {
  Q_OBJECT
 public:
  explicit KernelsView(QWidget* parent = nullptr);
  void setRun(const RunDataPtr& run) override;

  KernelTimeline* timeline() const { return timeline_; }
  QTableView* table() const { return table_; }
  KernelTableModel* model() const { return model_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QLineEdit* nameFilter() const { return name_filter_; }
  // Which rows the table ranks: all, or one place (analysis::kernel_place) with shares within it.
  // A run with GPU work opens on the GPU's, as `report --kernels` puts it first.
  QComboBox* placeFilter() const { return place_filter_; }
  QString selectionText() const { return selection_label_->text(); }
  QLabel* rangeLabel() const { return range_label_; }
  // Name of the kernel selected in the table, empty when none.
  QString selectedTableName() const;

 private:
  void applyRange(TimeRange range);
  void selectNameInTable(int name);
  void updateRangeLabel();
  void updateSelectionLabel();

  KernelTimeline* timeline_;
  KernelTableModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QLabel* range_label_;
  QLineEdit* name_filter_;
  QComboBox* place_filter_;
  QLabel* selection_label_;
  QSplitter* split_;
  bool syncing_ = false;  // guards the table ↔ timeline selection loop
};

}  // namespace tcprof::gui
