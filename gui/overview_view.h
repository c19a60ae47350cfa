// Overview: what was run (command, model, stance, config), the counts, compile time and speed,
// and the three biggest problems in plain words, each linking to the view that shows it.
#pragma once
#include <QTextBrowser>

#include "gui/run_view.h"

namespace tcprof::gui {

class OverviewView : public RunView {
  Q_OBJECT
 public:
  explicit OverviewView(QWidget* parent = nullptr);
  void setRun(const RunDataPtr& run) override;
  QString text() const { return browser_->toPlainText(); }
  QTextBrowser* browser() const { return browser_; }

 signals:
  void openView(const QString& view);  // "breaks", "recompiles", ...

 private:
  QTextBrowser* browser_;
};

}  // namespace tcprof::gui
