// Graph breaks: de-duplicated sites in a sortable, filterable table; the selected site's source
// with its line highlighted, what broke, why, how to fix it, and the stack.
#pragma once
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QTableView>
#include <QTextBrowser>

#include "gui/breaks_model.h"
#include "gui/run_view.h"
#include "gui/source_view.h"

namespace tcprof::gui {

class BreaksView : public RunView {
  Q_OBJECT
 public:
  explicit BreaksView(QWidget* parent = nullptr);
  void setRun(const RunDataPtr& run) override;

  QTableView* table() const { return table_; }
  BreaksModel* model() const { return model_; }
  BreaksFilterProxy* proxy() const { return proxy_; }
  SourceView* source() const { return source_; }
  QComboBox* typeFilter() const { return type_filter_; }
  QLineEdit* moduleFilter() const { return module_filter_; }
  QString detailsText() const { return details_->toPlainText(); }

 private:
  void showSite(const QModelIndex& proxy_index);
  void updateCountLabel();

  BreaksModel* model_;
  BreaksFilterProxy* proxy_;
  QTableView* table_;
  QComboBox* type_filter_;
  QLineEdit* module_filter_;
  QLabel* count_label_;
  QTextBrowser* details_;
  SourceView* source_;
};

}  // namespace tcprof::gui
