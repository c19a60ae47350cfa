// Drawing and hit-testing sorted intervals (calls, compiles, kernels) for the timeline, with cost
// bounded by pixels rather than by the number of intervals. Header-only: the accessors are
// lambdas over whichever arrays hold the intervals.
#pragma once
#include <QColor>
#include <QFontMetrics>
#include <QPainter>
#include <QString>
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tcprof::gui::timeline {

// First index in [from, n) whose start is >= t; `start` must be sorted.
template <typename Start>
size_t first_at_or_after(size_t from, size_t n, Start start, double t) {
  size_t lo = from, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (static_cast<double>(start(mid)) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Index of the interval containing t (within `tolerance` ns), preferring the shortest; -1 if none.
template <typename Start, typename End>
long find_at(size_t n, Start start, End end, int64_t max_len, double t, double tolerance) {
  size_t i = first_at_or_after(0, n, start, t - tolerance - static_cast<double>(max_len));
  long best = -1;
  double best_len = 0;
  for (; i < n && static_cast<double>(start(i)) <= t + tolerance; ++i) {
    if (static_cast<double>(end(i)) + tolerance < t) continue;
    const double len = static_cast<double>(end(i) - start(i));
    if (best < 0 || len < best_len) {
      best = static_cast<long>(i);
      best_len = len;
    }
  }
  return best;
}

struct IntervalPainter {
  QPainter& p;
  double view_start, view_end, x_left, scale;  // x = x_left + (t - view_start) * scale
  int items = 0;
  double x(double t) const { return x_left + (t - view_start) * scale; }

  // Draws sorted intervals [start(i), end(i)) into the band y..y+h. Intervals narrower than a
  // pixel are merged into one column per pixel: the loop then jumps past the pixel with a
  // binary search, so the cost is O(pixels · log n) however many intervals there are.
  template <typename Start, typename End, typename Color, typename Label>
  void draw(size_t n, int64_t max_len, int y, int h, Start start, End end, Color color,
            Label label) {
    size_t i = first_at_or_after(0, n, start, view_start - static_cast<double>(max_len));
    const QFontMetrics fm = p.fontMetrics();
    while (i < n) {
      const double s = static_cast<double>(start(i));
      if (s > view_end) break;
      const double e = static_cast<double>(end(i));
      if (e < view_start) {
        ++i;
        continue;
      }
      const double x0 = std::max(x(s), x_left - 2), x1 = x(e);
      ++items;
      if (x1 - x0 < 1.0) {
        const double column = std::floor(x0);
        p.fillRect(QRectF(column, y + 2, 1, h - 4), color(i));
        i = first_at_or_after(i + 1, n, start, view_start + (column + 1 - x_left) / scale);
        continue;
      }
      const QRectF r(x0, y + 2, x1 - x0, h - 4);
      p.fillRect(r, color(i));
      if (r.width() > 4) {
        p.setPen(QColor(0, 0, 0, 60));
        p.drawRect(r);
      }
      if (r.width() > 60) {  // room for a few characters, else the colour says enough
        p.setPen(QColor(0x20, 0x20, 0x20));
        const QRectF text = r.adjusted(3, 0, -3, 0).intersected(QRectF(x_left, r.y(), 1e9, r.height()));
        p.drawText(text, Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(label(i), Qt::ElideRight, static_cast<int>(text.width())));
      }
      ++i;
    }
  }
};

}  // namespace tcprof::gui::timeline
