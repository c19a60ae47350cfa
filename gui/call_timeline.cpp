#include "gui/call_timeline.h"

#include <QMouseEvent>
#include <QPainter>
#include <algorithm>

#include "gui/format.h"

namespace tcprof::gui {

namespace {
constexpr int kLeft = 8, kRight = 8, kTop = 18, kBarHeight = 34;
}

CallTimeline::CallTimeline(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(sizeHint().height());
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void CallTimeline::setCalls(const RunDataPtr& run, Id frame_id) {
  run_ = run;
  calls_.clear();
  entries_.clear();
  recompile_calls_.clear();
  if (run_) {
    for (const auto& c : run_->calls) {
      if (c.frame_id == frame_id) calls_.push_back(&c);
    }
    for (const auto& c : run_->compiles) {
      if (c.frame_id == frame_id) entries_.push_back(c.id);
    }
    for (const auto& r : run_->recompiles) {
      if (r.frame_id == frame_id) recompile_calls_.push_back(r.call_id);
    }
  }
  update();
}

void CallTimeline::setSelectedCall(Id call_id) {
  selected_call_ = call_id;
  update();
}

QColor CallTimeline::entryColor(Id compile_id) const {
  auto it = std::find(entries_.begin(), entries_.end(), compile_id);
  return it == entries_.end() ? QColor(0xb0, 0xb0, 0xb0) : palette_color(static_cast<int>(it - entries_.begin()));
}

QRectF CallTimeline::barRect(int index) const {
  const double w = std::max(1, width() - kLeft - kRight);
  const double step = w / std::max<size_t>(1, calls_.size());
  return QRectF(kLeft + index * step, kTop, std::max(1.0, step - (step > 4 ? 1 : 0)), kBarHeight);
}

void CallTimeline::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  if (calls_.empty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, "No calls recorded for this frame");
    return;
  }
  p.setPen(palette().color(QPalette::Text));
  p.drawText(QRect(kLeft, 0, width(), kTop - 2), Qt::AlignLeft | Qt::AlignBottom,
             QString("%1 calls, in order · colour = cache entry that served the call · red = recompile").arg(calls_.size()));
  for (size_t i = 0; i < calls_.size(); ++i) {
    const CallRow& c = *calls_[i];
    const QRectF r = barRect(static_cast<int>(i));
    p.fillRect(r, c.path == "compiled" ? entryColor(c.compile_id) : QColor(0xb0, 0xb0, 0xb0));
    if (c.id == selected_call_) {
      p.setPen(QPen(Qt::black, 2));
      p.drawRect(r.adjusted(-1, -1, 1, 1));
    }
  }
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(0xc0, 0x1f, 0x1f));
  for (size_t i = 0; i < calls_.size(); ++i) {
    if (std::find(recompile_calls_.begin(), recompile_calls_.end(), calls_[i]->id) == recompile_calls_.end()) continue;
    const QRectF r = barRect(static_cast<int>(i));
    const double x = r.left();
    const QPointF tri[3] = {{x - 6, r.bottom() + 12}, {x + 6, r.bottom() + 12}, {x, r.bottom() + 2}};
    p.drawPolygon(tri, 3);
    p.fillRect(QRectF(x - 1, r.top() - 4, 2, r.height() + 6), QColor(0xc0, 0x1f, 0x1f));
  }
}

void CallTimeline::mousePressEvent(QMouseEvent* event) {
  for (size_t i = 0; i < calls_.size(); ++i) {
    const QRectF r = barRect(static_cast<int>(i)).adjusted(-1, -4, 1, 14);
    if (r.contains(event->position())) {
      setSelectedCall(calls_[i]->id);
      emit callClicked(calls_[i]->id);
      return;
    }
  }
}

}  // namespace tcprof::gui
