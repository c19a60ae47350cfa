#include "gui/training_view.h"

#include <QVBoxLayout>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>

#include "gui/format.h"

namespace tcprof::gui {

TrainingView::TrainingView(QWidget* parent) : RunView(parent), view_(new QChartView), summary_(new QLabel) {
  view_->setRenderHint(QPainter::Antialiasing);
  view_->chart()->legend()->setAlignment(Qt::AlignTop);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(view_, 1);
}

void TrainingView::setRun(const RunDataPtr& run) {
  run_ = run;
  QChart* chart = view_->chart();
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  recompile_steps_.clear();
  if (!run_ || run_->steps.empty()) {
    chart->setTitle("No training steps in this run (record one with `tcprof train`)");
    summary_->setText("");
    return;
  }
  chart->setTitle("");
  const auto& steps = run_->steps;
  auto* loss = new QLineSeries;
  loss->setName("loss");
  loss->setColor(QColor(0x1f, 0x77, 0xb4));
  auto* time = new QLineSeries;
  time->setName("step time (ms)");
  time->setColor(QColor(0xff, 0x7f, 0x0e));
  double loss_max = 0, time_max = 0;
  bool has_loss = false;
  // Long runs: at most ~2000 buckets of steps, each drawn as its mean loss and its fastest and
  // slowest step time, so slow steps (recompiles) stay visible and the chart stays fast.
  const size_t stride = std::max<size_t>(1, (steps.size() + 1999) / 2000);
  for (size_t b = 0; b < steps.size(); b += stride) {
    const size_t end = std::min(steps.size(), b + stride);
    double loss_sum = 0, slowest = 0, fastest = 1e300;
    int losses = 0;
    for (size_t i = b; i < end; ++i) {
      const StepRow& s = steps[i];
      if (s.loss && std::isfinite(*s.loss)) {
        loss_sum += *s.loss;
        ++losses;
      }
      const double ms = static_cast<double>(s.duration_ns) / 1e6;
      slowest = std::max(slowest, ms);
      fastest = std::min(fastest, ms);
    }
    const double x = static_cast<double>(steps[b].step);
    if (losses > 0) {
      loss->append(x, loss_sum / losses);
      loss_max = std::max(loss_max, loss_sum / losses);
      has_loss = true;
    }
    if (stride > 1) time->append(x, fastest);
    time->append(stride > 1 ? static_cast<double>(steps[(b + end - 1) / 2].step) : x, slowest);
    time_max = std::max(time_max, slowest);
  }
  // A recompile belongs to the step running when it started (or the next one to start).
  for (const RecompileRow& r : run_->recompiles) {
    const CompileRow* c = run_->compile(r.compile_id);
    if (!c) continue;
    auto it = std::find_if(steps.begin(), steps.end(), [&](const StepRow& s) {
      return c->start_ns < s.start_ns + s.duration_ns;
    });
    if (it != steps.end()) recompile_steps_.push_back(it->step);
  }
  const double x_min = static_cast<double>(steps.front().step);
  const double x_max = std::max(x_min + 1, static_cast<double>(steps.back().step));
  auto* x = new QValueAxis;
  x->setTitleText("step");
  x->setLabelFormat("%d");
  x->setRange(x_min, x_max);
  x->setTickType(QValueAxis::TicksDynamic);
  x->setTickAnchor(0);
  x->setTickInterval(nice_integer_interval(x_max - x_min));
  auto* y_loss = new QValueAxis;
  y_loss->setTitleText("loss");
  y_loss->setRange(0, std::max(1e-9, loss_max * 1.1));
  y_loss->setLinePenColor(loss->color());
  auto* y_time = new QValueAxis;
  y_time->setTitleText("step time (ms)");
  y_time->setRange(0, std::max(1e-9, time_max * 1.15));
  y_time->setLinePenColor(time->color());
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y_loss, Qt::AlignLeft);
  chart->addAxis(y_time, Qt::AlignRight);
  if (has_loss) {
    chart->addSeries(loss);
    loss->attachAxis(x);
    loss->attachAxis(y_loss);
  } else {
    delete loss;
  }
  chart->addSeries(time);
  time->attachAxis(x);
  time->attachAxis(y_time);
  bool first = true;
  for (int64_t step : recompile_steps_) {
    auto* mark = new QLineSeries;
    mark->setName(first ? "recompile" : "");
    mark->setPen(QPen(QColor(0xc0, 0x1f, 0x1f), 2, Qt::DashLine));
    mark->append(static_cast<double>(step), 0);
    mark->append(static_cast<double>(step), time_max * 1.15);
    chart->addSeries(mark);
    mark->attachAxis(x);
    mark->attachAxis(y_time);
    if (!first) chart->legend()->markers(mark).value(0)->setVisible(false);
    first = false;
  }
  // Step medians come from analysis::summarize_run, as `report` prints them.
  const analysis::RunSummary& m = run_->summary;
  QString text = QString("<b>%1</b> steps · median step %2 · final loss %3 · %4 recompile(s) during training")
                     .arg(steps.size())
                     .arg(format_ns(m.ms_per_step * 1e6))
                     .arg(steps.back().loss ? QString::number(*steps.back().loss, 'g', 4) : QString("—"))
                     .arg(recompile_steps_.size());
  if (m.ms_per_step_forward > 0) {
    text += QString("<br>step phases (medians): forward <b>%1</b> · backward <b>%2</b> · optimizer <b>%3</b>")
                .arg(format_ns(m.ms_per_step_forward * 1e6), format_ns(m.ms_per_step_backward * 1e6),
                     format_ns(m.ms_per_step_optimizer * 1e6));
  }
  summary_->setText(text);
}

}  // namespace tcprof::gui
