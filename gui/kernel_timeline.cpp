#include "gui/kernel_timeline.h"

#include <QHash>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "gui/format.h"
#include "gui/interval_painter.h"
#include "gui/timeline_ruler.h"

namespace tcprof::gui {
using namespace timeline;

KernelTimeline::KernelTimeline(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(false);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

QSize KernelTimeline::sizeHint() const { return {900, rowTop(rowCount()) + 8}; }
QSize KernelTimeline::minimumSizeHint() const { return {300, rowTop(std::min(rowCount(), 4)) + 8}; }

int KernelTimeline::rowCount() const {
  return 3 + (run_ ? static_cast<int>(run_->kernels.lanes.size()) : 0);
}

void KernelTimeline::setRun(const RunDataPtr& run, bool keep_view) {
  run_ = run;
  selected_ = {};
  highlight_name_ = -1;
  max_call_ns_ = max_compile_ns_ = max_span_ns_ = 0;
  if (run_) {
    for (const auto& c : run_->calls) max_call_ns_ = std::max(max_call_ns_, c.duration_ns);
    for (const auto& c : run_->compiles) max_compile_ns_ = std::max(max_compile_ns_, c.duration_ns);
    for (const auto& s : run_->kernels.graph_spans) max_span_ns_ = std::max(max_span_ns_, s.end_ns - s.start_ns);
    origin_ = static_cast<double>(run_->time_range.start_ns);
  }
  if (!keep_view) {
    range_ = {};
    resetView();
  }
  updateGeometry();
  update();
}

void KernelTimeline::resetView() {
  if (run_ && !run_->time_range.empty()) {
    const double pad = 0.01 * static_cast<double>(run_->time_range.end_ns - run_->time_range.start_ns);
    view_start_ = static_cast<double>(run_->time_range.start_ns) - pad;
    view_end_ = static_cast<double>(run_->time_range.end_ns) + pad;
  } else {
    view_start_ = 0;
    view_end_ = 1;
  }
  update();
}

void KernelTimeline::setView(double start_ns, double end_ns) {
  view_start_ = start_ns;
  view_end_ = std::max(end_ns, start_ns + 10);  // 10 ns is as far as zooming makes sense
  clampView();
  update();
}

void KernelTimeline::clampView() {
  if (!run_ || run_->time_range.empty()) return;
  const double lo = static_cast<double>(run_->time_range.start_ns);
  const double hi = static_cast<double>(run_->time_range.end_ns);
  const double span = std::min(view_end_ - view_start_, (hi - lo) * 1.2);
  view_end_ = view_start_ + span;
  const double margin = span * 0.5;
  if (view_start_ < lo - margin) view_start_ = lo - margin;
  if (view_start_ + span > hi + margin) view_start_ = hi + margin - span;
  view_end_ = view_start_ + span;
}

double KernelTimeline::xOf(double t) const {
  const double w = std::max(1, width() - kLabelWidth);
  return kLabelWidth + (t - view_start_) * w / (view_end_ - view_start_);
}

double KernelTimeline::timeAt(double x) const {
  const double w = std::max(1, width() - kLabelWidth);
  return view_start_ + (x - kLabelWidth) * (view_end_ - view_start_) / w;
}

void KernelTimeline::zoomAt(double x, double factor) {
  const double t = timeAt(std::max<double>(x, kLabelWidth));
  setView(t - (t - view_start_) * factor, t + (view_end_ - t) * factor);
}

void KernelTimeline::setSelectedRange(TimeRange range) {
  range_ = range;
  update();
  emit rangeSelected(range_);
}

void KernelTimeline::selectKernel(KernelRef ref) {
  selected_ = ref;
  emit selectionChanged();
  if (ref.valid() && run_) {
    const KernelLane& lane = run_->kernels.lanes[static_cast<size_t>(ref.lane)];
    highlight_name_ = static_cast<int>(lane.name[ref.index]);
    // Scroll (keeping the zoom) when the kernel is off screen.
    const double s = static_cast<double>(lane.start[ref.index]);
    const double e = s + static_cast<double>(lane.duration[ref.index]);
    if (e < view_start_ || s > view_end_) {
      const double span = view_end_ - view_start_;
      setView((s + e) / 2 - span / 2, (s + e) / 2 + span / 2);
    }
  }
  update();
}

void KernelTimeline::revealName(int name) {
  if (!run_) return;
  // The longest instance, looked for where the user is looking: the selected range (the table
  // shows only that), else the visible window, else the whole run.
  auto longest_in = [&](double from, double to) {
    KernelRef best;
    int64_t best_duration = -1;
    for (size_t l = 0; l < run_->kernels.lanes.size(); ++l) {
      const KernelLane& lane = run_->kernels.lanes[l];
      const auto begin = std::lower_bound(lane.start.begin(), lane.start.end(), static_cast<int64_t>(from));
      for (size_t i = static_cast<size_t>(begin - lane.start.begin()); i < lane.size() && lane.start[i] < to; ++i) {
        if (static_cast<int>(lane.name[i]) == name && lane.duration[i] > best_duration) {
          best_duration = lane.duration[i];
          best = {static_cast<int>(l), i};
        }
      }
    }
    return best;
  };
  KernelRef best;
  if (!range_.empty()) best = longest_in(static_cast<double>(range_.start_ns), static_cast<double>(range_.end_ns));
  if (!best.valid()) best = longest_in(view_start_, view_end_);
  if (!best.valid()) best = longest_in(-1e18, 1e18);
  selectKernel(best);
  highlight_name_ = name;
  update();
}

void KernelTimeline::stepInstance(int direction) {
  if (!run_ || !selected_.valid()) return;
  const auto& lanes = run_->kernels.lanes;
  const KernelLane& current = lanes[static_cast<size_t>(selected_.lane)];
  const uint32_t name = current.name[selected_.index];
  const int64_t at = current.start[selected_.index];
  // Per lane, the nearest instance strictly after (or before) the current one; ties on start
  // time are broken by lane so stepping never stalls.
  KernelRef best;
  int64_t best_start = 0;
  for (size_t l = 0; l < lanes.size(); ++l) {
    const KernelLane& lane = lanes[l];
    const int lane_index = static_cast<int>(l);
    auto after = [&](int64_t s) { return s > at || (s == at && lane_index > selected_.lane); };
    auto before = [&](int64_t s) { return s < at || (s == at && lane_index < selected_.lane); };
    if (direction > 0) {
      for (size_t i = static_cast<size_t>(std::lower_bound(lane.start.begin(), lane.start.end(), at) - lane.start.begin());
           i < lane.size(); ++i) {
        if (lane.name[i] != name || !after(lane.start[i]) || (lane_index == selected_.lane && i == selected_.index)) continue;
        if (!best.valid() || lane.start[i] < best_start) best = {lane_index, i}, best_start = lane.start[i];
        break;
      }
    } else {
      size_t i = static_cast<size_t>(std::upper_bound(lane.start.begin(), lane.start.end(), at) - lane.start.begin());
      while (i-- > 0) {
        if (lane.name[i] != name || !before(lane.start[i]) || (lane_index == selected_.lane && i == selected_.index)) continue;
        if (!best.valid() || lane.start[i] > best_start) best = {lane_index, i}, best_start = lane.start[i];
        break;
      }
    }
  }
  if (best.valid()) selectKernel(best);
}

KernelTimeline::KernelRef KernelTimeline::kernelAt(QPoint pos) const {
  if (!run_ || pos.x() < kLabelWidth) return {};
  const int lane_index = (pos.y() - rowTop(3)) / kRowHeight;
  if (pos.y() < rowTop(3) || lane_index >= static_cast<int>(run_->kernels.lanes.size())) return {};
  const KernelLane& lane = run_->kernels.lanes[static_cast<size_t>(lane_index)];
  const double t = timeAt(pos.x());
  const double tolerance = 2 * (view_end_ - view_start_) / std::max(1, width() - kLabelWidth);
  const long i = find_at(
      lane.size(), [&](size_t k) { return lane.start[k]; },
      [&](size_t k) { return lane.start[k] + lane.duration[k]; }, lane.max_duration, t, tolerance);
  return i < 0 ? KernelRef{} : KernelRef{lane_index, static_cast<size_t>(i)};
}

QPointF KernelTimeline::centerOf(KernelRef ref) const {
  if (!run_ || !ref.valid()) return {};
  const KernelLane& lane = run_->kernels.lanes[static_cast<size_t>(ref.lane)];
  const double mid = static_cast<double>(lane.start[ref.index]) + static_cast<double>(lane.duration[ref.index]) / 2;
  return {xOf(mid), rowTop(3 + ref.lane) + kRowHeight / 2.0};
}

void KernelTimeline::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  const double w = std::max(1, width() - kLabelWidth);
  IntervalPainter rows{p, view_start_, view_end_, double(kLabelWidth), w / (view_end_ - view_start_)};
  p.setClipRect(kLabelWidth, 0, width() - kLabelWidth, height());

  // Alternate row shading so lanes are easy to follow across the screen.
  for (int r = 0; r < rowCount(); ++r) {
    if (r % 2) p.fillRect(QRect(kLabelWidth, rowTop(r), width(), kRowHeight), palette().color(QPalette::AlternateBase));
  }
  if (run_) {
    // Cache entry → colour: its index among its frame's compiles, as in the Recompiles view.
    QHash<Id, int> entry_index, per_frame;
    for (const auto& c : run_->compiles) entry_index.insert(c.id, per_frame[c.frame_id]++);
    const auto& calls = run_->calls;
    rows.draw(
        calls.size(), max_call_ns_, rowTop(0), kRowHeight, [&](size_t i) { return calls[i].start_ns; },
        [&](size_t i) { return calls[i].start_ns + calls[i].duration_ns; },
        [&](size_t i) {
          return calls[i].path == "compiled" ? palette_color(entry_index.value(calls[i].compile_id))
                                             : QColor(0xb0, 0xb0, 0xb0);
        },
        [&](size_t i) {
          const CompileRow* c = run_->compile(calls[i].compile_id);
          return c ? QString("call → %1").arg(QString::fromStdString(c->compile_label)) : QString("eager call");
        });
    const auto& compiles = run_->compiles;
    rows.draw(
        compiles.size(), max_compile_ns_, rowTop(1), kRowHeight,
        [&](size_t i) { return compiles[i].start_ns; },
        [&](size_t i) { return compiles[i].start_ns + compiles[i].duration_ns; },
        [&](size_t i) { return compiles[i].compile_label.substr(compiles[i].compile_label.find('/') + 1) == "0" ? QColor(0xf4b183) : QColor(0xe15759); },
        [&](size_t i) {
          return QString("compile %1: %2").arg(QString::fromStdString(compiles[i].compile_label),
                                               QString::fromStdString(compiles[i].reason));
        });
    const auto& spans = run_->kernels.graph_spans;
    rows.draw(
        spans.size(), max_span_ns_, rowTop(2), kRowHeight, [&](size_t i) { return spans[i].start_ns; },
        [&](size_t i) { return spans[i].end_ns; },
        [&](size_t i) { return palette_color(static_cast<int>(spans[i].graph_id & 0xffff) + 3).lighter(125); },
        [&](size_t i) { return QString("graph %1").arg(spans[i].graph_id & 0xffffffff); });
    const auto& names = run_->kernels.names;
    for (size_t l = 0; l < run_->kernels.lanes.size(); ++l) {
      const KernelLane& lane = run_->kernels.lanes[l];
      // --profile summary windows: a pale band per name and call, under any individual kernels.
      rows.draw(
          lane.folded.size(), lane.max_folded_span, rowTop(3 + static_cast<int>(l)), kRowHeight,
          [&](size_t i) { return lane.folded[i].start_ns; }, [&](size_t i) { return lane.folded[i].end_ns; },
          [&](size_t i) {
            QColor c = color_for_name(names[lane.folded_name[i]]);
            c.setAlpha(140);
            return c;
          },
          [&](size_t i) { return QString("%1 ×%2").arg(names[lane.folded_name[i]]).arg(lane.folded[i].count); });
      rows.draw(
          lane.size(), lane.max_duration, rowTop(3 + static_cast<int>(l)), kRowHeight,
          [&](size_t i) { return lane.start[i]; }, [&](size_t i) { return lane.start[i] + lane.duration[i]; },
          [&](size_t i) {
            QColor c = color_for_name(names[lane.name[i]]);
            if (highlight_name_ >= 0 && static_cast<int>(lane.name[i]) != highlight_name_) c.setAlpha(90);
            return c;
          },
          [&](size_t i) { return names[lane.name[i]]; });
    }
    // Recompiles: red markers on the calls row at the call that forced them.
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0xc0, 0x1f, 0x1f));
    for (const auto& r : run_->recompiles) {
      const CompileRow* c = run_->compile(r.compile_id);
      if (!c) continue;
      const double x = rows.x(static_cast<double>(c->start_ns));
      const QPointF tri[3] = {{x - 5, double(rowTop(0))}, {x + 5, double(rowTop(0))}, {x, rowTop(0) + 8.0}};
      p.drawPolygon(tri, 3);
    }
    if (selected_.valid()) {
      const KernelLane& lane = run_->kernels.lanes[static_cast<size_t>(selected_.lane)];
      const double x0 = rows.x(static_cast<double>(lane.start[selected_.index]));
      const double x1 = std::max(x0 + 3, rows.x(static_cast<double>(lane.start[selected_.index] + lane.duration[selected_.index])));
      p.setBrush(Qt::NoBrush);
      p.setPen(QPen(Qt::black, 2));
      p.drawRect(QRectF(x0 - 1, rowTop(3 + selected_.lane) + 1, x1 - x0 + 2, kRowHeight - 2));
    }
  }
  if (!range_.empty()) {
    const double x0 = rows.x(static_cast<double>(range_.start_ns));
    const double x1 = rows.x(static_cast<double>(range_.end_ns));
    p.fillRect(QRectF(x0, kRulerHeight, x1 - x0, height()), QColor(40, 110, 220, 45));
    p.setPen(QPen(QColor(40, 110, 220), 1));
    p.drawLine(QPointF(x0, kRulerHeight), QPointF(x0, height()));
    p.drawLine(QPointF(x1, kRulerHeight), QPointF(x1, height()));
  }
  last_paint_items_ = rows.items;

  // Ruler: time since the run started.
  p.setClipping(false);
  p.fillRect(QRect(0, 0, width(), kRulerHeight), palette().color(QPalette::Window));
  p.setPen(palette().color(QPalette::Mid));
  p.drawLine(0, kRulerHeight - 1, width(), kRulerHeight - 1);
  const double ns_per_px = (view_end_ - view_start_) / w;
  const double step = nice_step(ns_per_px, 90);
  p.setPen(palette().color(QPalette::Text));
  for (double t = std::ceil((view_start_ - origin_) / step) * step + origin_; t <= view_end_; t += step) {
    const double x = rows.x(t);
    if (x < kLabelWidth) continue;
    p.drawLine(QPointF(x, kRulerHeight - 6), QPointF(x, kRulerHeight - 1));
    p.drawText(QPointF(x + 3, kRulerHeight - 8), tick_label(t - origin_, step));
  }
  // Row labels.
  p.fillRect(QRect(0, kRulerHeight, kLabelWidth, height()), palette().color(QPalette::Window));
  p.setPen(palette().color(QPalette::Mid));
  p.drawLine(kLabelWidth - 1, 0, kLabelWidth - 1, height());
  p.setPen(palette().color(QPalette::WindowText));
  QStringList labels = {"Calls", "Compiles", "Graphs"};
  if (run_) {
    for (const auto& lane : run_->kernels.lanes) labels << lane.label;
  }
  for (int r = 0; r < labels.size(); ++r) {
    p.drawText(QRect(8, rowTop(r), kLabelWidth - 12, kRowHeight), Qt::AlignVCenter | Qt::AlignLeft, labels[r]);
  }
  if (hasFocus()) {
    p.setPen(QPen(palette().color(QPalette::Highlight), 1));
    p.drawRect(rect().adjusted(0, 0, -1, -1));
  }
}

void KernelTimeline::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (event->modifiers() & Qt::ShiftModifier || event->angleDelta().x() != 0) {
    const double dx = event->angleDelta().x() != 0 ? event->angleDelta().x() : event->angleDelta().y();
    const double span = view_end_ - view_start_;
    setView(view_start_ - dx / 120.0 * span * 0.1, view_end_ - dx / 120.0 * span * 0.1);
  } else {
    zoomAt(event->position().x(), std::pow(0.8, steps));
  }
  event->accept();
}

void KernelTimeline::mousePressEvent(QMouseEvent* event) {
  setFocus();
  press_pos_ = event->pos();
  press_view_start_ = view_start_;
  press_time_ = timeAt(event->pos().x());
  moved_ = false;
  const bool range = (event->modifiers() & Qt::ShiftModifier) || event->button() == Qt::RightButton;
  drag_ = range ? Drag::Range : Drag::Pan;
  if (drag_ == Drag::Pan) setCursor(Qt::ClosedHandCursor);
}

void KernelTimeline::mouseMoveEvent(QMouseEvent* event) {
  if (drag_ == Drag::None) return;
  if ((event->pos() - press_pos_).manhattanLength() > 3) moved_ = true;
  if (!moved_) return;
  if (drag_ == Drag::Pan) {
    const double span = view_end_ - view_start_;
    const double dt = (event->pos().x() - press_pos_.x()) * span / std::max(1, width() - kLabelWidth);
    view_start_ = press_view_start_ - dt;
    view_end_ = view_start_ + span;
    clampView();
    update();
  } else {
    const double t = timeAt(event->pos().x());
    range_ = {static_cast<int64_t>(std::min(t, press_time_)), static_cast<int64_t>(std::max(t, press_time_))};
    update();
  }
}

void KernelTimeline::mouseReleaseEvent(QMouseEvent* event) {
  unsetCursor();
  const Drag drag = drag_;
  drag_ = Drag::None;
  if (drag == Drag::Range && moved_) {
    emit rangeSelected(range_);
    return;
  }
  if (moved_) return;
  const KernelRef ref = kernelAt(event->pos());
  selectKernel(ref);
  if (ref.valid()) emit kernelSelected(highlight_name_);
}

void KernelTimeline::mouseDoubleClickEvent(QMouseEvent* event) {
  const KernelRef ref = kernelAt(event->pos());
  if (!ref.valid()) {
    // On the calls, compiles or graphs row: zoom to that call, compile or graph span.
    if (!run_ || event->pos().x() < kLabelWidth) return;
    const double t = timeAt(event->pos().x());
    const double tolerance = 2 * (view_end_ - view_start_) / std::max(1, width() - kLabelWidth);
    const int row = (event->pos().y() - kRulerHeight) / kRowHeight;
    long i = -1;
    double s = 0, e = 0;
    if (row == 0) {
      const auto& c = run_->calls;
      i = find_at(c.size(), [&](size_t k) { return c[k].start_ns; },
                  [&](size_t k) { return c[k].start_ns + c[k].duration_ns; }, max_call_ns_, t, tolerance);
      if (i >= 0) s = double(c[size_t(i)].start_ns), e = s + double(c[size_t(i)].duration_ns);
    } else if (row == 1) {
      const auto& c = run_->compiles;
      i = find_at(c.size(), [&](size_t k) { return c[k].start_ns; },
                  [&](size_t k) { return c[k].start_ns + c[k].duration_ns; }, max_compile_ns_, t, tolerance);
      if (i >= 0) s = double(c[size_t(i)].start_ns), e = s + double(c[size_t(i)].duration_ns);
    } else if (row == 2) {
      const auto& g = run_->kernels.graph_spans;
      i = find_at(g.size(), [&](size_t k) { return g[k].start_ns; }, [&](size_t k) { return g[k].end_ns; },
                  max_span_ns_, t, tolerance);
      if (i >= 0) s = double(g[size_t(i)].start_ns), e = double(g[size_t(i)].end_ns);
    }
    if (i >= 0 && e > s) setView(s - (e - s) * 0.05, e + (e - s) * 0.05);
    return;
  }
  const KernelLane& lane = run_->kernels.lanes[static_cast<size_t>(ref.lane)];
  const double s = static_cast<double>(lane.start[ref.index]);
  const double d = static_cast<double>(std::max<int64_t>(lane.duration[ref.index], 10));
  setView(s - d * 2, s + d * 3);
}

void KernelTimeline::keyPressEvent(QKeyEvent* event) {
  const double span = view_end_ - view_start_;
  const double center = width() > kLabelWidth ? (kLabelWidth + width()) / 2.0 : 0;
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomAt(center, 0.5); break;
    case Qt::Key_Minus: zoomAt(center, 2.0); break;
    case Qt::Key_Left: setView(view_start_ - span * 0.2, view_end_ - span * 0.2); break;
    case Qt::Key_Right: setView(view_start_ + span * 0.2, view_end_ + span * 0.2); break;
    case Qt::Key_0:
    case Qt::Key_Home: resetView(); break;
    case Qt::Key_N: stepInstance(+1); break;
    case Qt::Key_P: stepInstance(-1); break;
    case Qt::Key_Escape:
      if (!range_.empty()) setSelectedRange({});
      break;
    default: QWidget::keyPressEvent(event); return;
  }
  event->accept();
}

bool KernelTimeline::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip || !run_) return QWidget::event(event);
  auto* help = static_cast<QHelpEvent*>(event);
  const QPoint pos = help->pos();
  QString tip;
  const double t = timeAt(pos.x());
  const double tolerance = 2 * (view_end_ - view_start_) / std::max(1, width() - kLabelWidth);
  if (const KernelRef ref = kernelAt(pos); ref.valid()) {
    const KernelLane& lane = run_->kernels.lanes[static_cast<size_t>(ref.lane)];
    const uint32_t name = lane.name[ref.index];
    tip = QString("<b>%1</b><br>%2 kernel, %3<br>starts at %4, graph %5")
              .arg(html_escape(run_->kernels.names[name]), run_->kernels.kinds[name],
                   format_ns(static_cast<double>(lane.duration[ref.index])),
                   format_ns(static_cast<double>(lane.start[ref.index]) - origin_))
              .arg(lane.graph_id[ref.index] & 0xffffffff);
  } else if (pos.y() >= rowTop(0) && pos.y() < rowTop(1) && pos.x() >= kLabelWidth) {
    const auto& calls = run_->calls;
    const long i = find_at(calls.size(), [&](size_t k) { return calls[k].start_ns; },
                           [&](size_t k) { return calls[k].start_ns + calls[k].duration_ns; },
                           max_call_ns_, t, tolerance);
    if (i >= 0) {
      const CallRow& c = calls[static_cast<size_t>(i)];
      const CompileRow* entry = run_->compile(c.compile_id);
      tip = QString("<b>Call</b> (%1), %2<br>served by cache entry %3<br>inputs %4")
                .arg(QString::fromStdString(c.path), format_ns(static_cast<double>(c.duration_ns)),
                     entry ? QString::fromStdString(entry->compile_label) : QString("—"),
                     html_escape(QString::fromStdString(c.input_shapes)));
    }
  } else if (pos.y() >= rowTop(1) && pos.y() < rowTop(2) && pos.x() >= kLabelWidth) {
    const auto& compiles = run_->compiles;
    const long i = find_at(compiles.size(), [&](size_t k) { return compiles[k].start_ns; },
                           [&](size_t k) { return compiles[k].start_ns + compiles[k].duration_ns; },
                           max_compile_ns_, t, tolerance);
    if (i >= 0) {
      const CompileRow& c = compiles[static_cast<size_t>(i)];
      tip = QString("<b>Compile %1</b>, %2<br>%3")
                .arg(QString::fromStdString(c.compile_label), format_ns(static_cast<double>(c.duration_ns)),
                     html_escape(QString::fromStdString(c.reason)));
    }
  }
  if (tip.isEmpty()) QToolTip::hideText();
  else QToolTip::showText(help->globalPos(), tip, this);
  return true;
}

}  // namespace tcprof::gui
