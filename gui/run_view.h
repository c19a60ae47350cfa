// Base of every tab: a widget that shows one run. MainWindow hands each view the run selected
// in the run list (and again after every live refresh, so views keep their selection when they
// can).
#pragma once
#include <QWidget>

#include "gui/run_data.h"

namespace tcprof::gui {

class RunView : public QWidget {
 public:
  using QWidget::QWidget;
  virtual void setRun(const RunDataPtr& run) = 0;
  const RunDataPtr& run() const { return run_; }

 protected:
  RunDataPtr run_;
};

}  // namespace tcprof::gui
