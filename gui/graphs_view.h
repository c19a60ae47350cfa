// Graphs: every compiled graph with the compile that produced it; for the selected one its
// guards, its IR and the generated code (monospace, C++ highlighted).
#pragma once
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTableView>

#include "gui/run_view.h"
#include "gui/table_model.h"

namespace tcprof::gui {

class GraphsView : public RunView {
  Q_OBJECT
 public:
  explicit GraphsView(QWidget* parent = nullptr);
  void setRun(const RunDataPtr& run) override;

  QTableView* graphTable() const { return graph_table_; }
  TableModel* graphModel() const { return graph_model_; }
  TableModel* guardModel() const { return guard_model_; }
  QPlainTextEdit* irView() const { return ir_; }
  QPlainTextEdit* codeView() const { return code_; }
  // The line the code pane opens on: the first kernel (with the comment naming its ops), after the
  // prelude of headers and math helpers every generated unit starts with.
  static int first_kernel_line(const QString& code);
  QTabWidget* tabs() const { return tabs_; }

 private:
  void showGraph(int row);

  TableModel* graph_model_;
  TableModel* guard_model_;
  TableModel* hint_model_;
  QTableView* graph_table_;
  QTabWidget* tabs_;
  QPlainTextEdit* ir_;
  QPlainTextEdit* code_;
};

}  // namespace tcprof::gui
