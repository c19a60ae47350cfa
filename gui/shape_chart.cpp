#include "gui/shape_chart.h"

#include <unordered_set>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>
#include <map>

#include "gui/format.h"

namespace tcprof::gui {

ShapeChart::ShapeChart(QWidget* parent) : QChartView(parent) {
  setRenderHint(QPainter::Antialiasing);
  chart()->setMargins(QMargins(4, 4, 4, 4));
  chart()->legend()->setAlignment(Qt::AlignRight);
}

void ShapeChart::setCalls(const RunDataPtr& run, Id frame_id) {
  QChart* c = chart();
  c->removeAllSeries();
  for (QAbstractAxis* axis : c->axes()) {
    c->removeAxis(axis);
    delete axis;
  }
  if (!run) return;
  // (input, dim) -> size per call index; -1 where the call had no such dimension.
  std::map<std::pair<int, int>, std::vector<double>> sizes;
  int n = 0;
  std::vector<int> recompile_at;
  std::unordered_set<Id> recompile_calls;
  for (const auto& r : run->recompiles) recompile_calls.insert(r.call_id);
  for (size_t c = 0; c < run->calls.size(); ++c) {
    const CallRow& call = run->calls[c];
    if (call.frame_id != frame_id) continue;
    const auto& inputs = run->call_shapes[c];
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (size_t d = 0; d < inputs[i].size(); ++d) {
        auto& v = sizes[{static_cast<int>(i), static_cast<int>(d)}];
        v.resize(static_cast<size_t>(n), -1);
        v.push_back(static_cast<double>(inputs[i][d]));
      }
    }
    if (recompile_calls.count(call.id)) recompile_at.push_back(n);
    ++n;
  }
  double max_size = 1;
  int plotted = 0;
  for (auto& [key, values] : sizes) {
    values.resize(static_cast<size_t>(n), -1);
    bool varies = false;
    for (double v : values) varies |= v != values.front();
    if (!varies) continue;  // static dimensions only clutter the chart
    auto* series = new QLineSeries;
    series->setName(QString("input %1 · dim %2").arg(key.first).arg(key.second));
    series->setColor(palette_color(plotted++));
    // Sizes hold until they change: draw steps, with points only where a size changes, so a
    // run of 100k calls costs a few points per change rather than one per call.
    double previous = -2;
    for (int i = 0; i < n; ++i) {
      const double v = values[static_cast<size_t>(i)];
      if (v < 0 || v == previous) continue;
      if (previous >= 0) series->append(i, previous);
      series->append(i, v);
      max_size = std::max(max_size, v);
      previous = v;
    }
    if (previous >= 0) series->append(n - 1, previous);
    c->addSeries(series);
  }
  bool first_mark = true;
  for (int at : plotted > 0 ? recompile_at : std::vector<int>{}) {
    auto* mark = new QLineSeries;  // a dashed vertical line per recompile, as in Training
    mark->setName(first_mark ? "recompile" : "");
    mark->setPen(QPen(QColor(0xc0, 0x1f, 0x1f), 2, Qt::DashLine));
    mark->append(at, 0);
    mark->append(at, max_size * 1.1);
    c->addSeries(mark);
    if (!first_mark) c->legend()->markers(mark).value(0)->setVisible(false);
    first_mark = false;
  }
  c->setTitle(plotted == 0 ? (n == 0 ? QString("No input shapes recorded")
                                     : QString("Input shapes did not change over %1 calls").arg(n))
                           : QString("Sizes of the input dimensions that changed, per call"));
  if (plotted == 0) return;
  auto* x = new QValueAxis;
  x->setTitleText("call");
  x->setLabelFormat("%d");
  x->setRange(0, std::max(1, n - 1));
  x->setTickType(QValueAxis::TicksDynamic);
  x->setTickAnchor(0);
  x->setTickInterval(nice_integer_interval(std::max(1, n - 1)));
  auto* y = new QValueAxis;
  y->setTitleText("size");
  y->setLabelFormat("%d");
  y->setRange(0, max_size * 1.1);
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  for (QAbstractSeries* s : c->series()) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
}

QStringList ShapeChart::seriesNames() const {
  QStringList names;
  for (QAbstractSeries* s : chart()->series()) names << s->name();
  return names;
}

}  // namespace tcprof::gui
