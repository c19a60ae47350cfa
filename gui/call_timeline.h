// One frame's calls in order, each a bar coloured by the cache entry that served it (grey when it
// ran eagerly), with a red marker where a recompile happened. Bars are evenly spaced by call
// index, not time: the question here is "which entry served which call", not durations.
#pragma once
#include <QWidget>
#include <vector>

#include "gui/run_data.h"

namespace tcprof::gui {

class CallTimeline : public QWidget {
  Q_OBJECT
 public:
  explicit CallTimeline(QWidget* parent = nullptr);
  void setCalls(const RunDataPtr& run, Id frame_id);
  void setSelectedCall(Id call_id);
  int callCount() const { return static_cast<int>(calls_.size()); }
  // Colour of cache entry `compile_id` as drawn (legends use the same).
  QColor entryColor(Id compile_id) const;
  QSize sizeHint() const override { return {600, 86}; }

 signals:
  void callClicked(tcprof::Id call_id);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  QRectF barRect(int index) const;
  RunDataPtr run_;
  std::vector<const CallRow*> calls_;
  std::vector<Id> entries_;           // compile ids of the frame in order: colour index
  std::vector<Id> recompile_calls_;   // calls that forced a recompile
  Id selected_call_ = 0;
};

}  // namespace tcprof::gui
