#include "gui/compile_time_view.h"

#include <QSplitter>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>

#include "analysis/compile_time.h"
#include "gui/format.h"
#include "gui/table_view.h"

namespace tcprof::gui {
namespace {

using analysis::CompileStage;
using analysis::kCompileStages;

// The stages as the view names and colours them, in the order they run.
struct StageLook {
  const char* title;
  QColor color;
};
const StageLook kStages[kCompileStages] = {
    {"Dynamo", QColor(0x4e, 0x79, 0xa7)},      {"AOTAutograd", QColor(0xf2, 0x8e, 0x2b)},
    {"Inductor", QColor(0x59, 0xa1, 0x4f)},    {"Code compile", QColor(0xe1, 0x57, 0x59)},
    {"Autotuning", QColor(0xb0, 0x7a, 0xa1)},  {"Other", QColor(0xba, 0xb0, 0xac)},
};

QString cache_text(int hits, int misses) {
  if (hits + misses == 0) return "—";
  return QString("%1 hit%2, %3 miss%4").arg(hits).arg(hits == 1 ? "" : "s").arg(misses).arg(misses == 1 ? "" : "es");
}

QStringList stage_headers() {
  QStringList h = {"Compile", "Frame", "Total"};
  for (const auto& s : kStages) h << s.title;
  h << "FX graph cache" << "AOTAutograd cache";
  return h;
}

}  // namespace

CompileTimeView::CompileTimeView(QWidget* parent)
    : RunView(parent),
      summary_(new QLabel),
      chart_(new QChartView),
      compile_model_(new TableModel(stage_headers(), this)),
      repeat_model_(new TableModel({"What repeats", "Could save"}, this)),
      compile_table_(make_row_table(compile_model_, 1)) {
  summary_->setWordWrap(true);
  summary_->setTextFormat(Qt::RichText);
  chart_->setRenderHint(QPainter::Antialiasing);
  // The summary line above names the stages in their colours: no legend to take the bars' room.
  chart_->chart()->legend()->hide();
  chart_->chart()->setMargins(QMargins(4, 4, 4, 4));
  chart_->setMinimumHeight(220);
  QTableView* repeat_table = make_row_table(repeat_model_, 0);
  repeat_table->setWordWrap(true);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(chart_);
  split->addWidget(titled("<b>Compiles</b> (time by stage, cache lookups)", compile_table_));
  split->addWidget(titled("<b>What repeats</b>: compile work a warm cache, a dynamic dimension or regional "
                          "compilation would do once",
                          repeat_table));
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setStretchFactor(2, 1);
  split->setSizes({420, 300, 130});
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);
}

void CompileTimeView::setRun(const RunDataPtr& run) {
  run_ = run;
  compile_model_->setRows({});
  repeat_model_->setRows({});
  const analysis::CompileTimeReport* t = run_ ? &run_->compile_time : nullptr;
  if (!t || t->compiles.empty()) {
    summary_->setText("No compiles in this run.");
    showChart();
    return;
  }
  QString text = QString("Compile time <b>%1</b> in %2 compile%3")
                     .arg(format_ns(static_cast<double>(t->total_ns)))
                     .arg(t->compiles.size())
                     .arg(t->compiles.size() == 1 ? "" : "s");
  QStringList stages;
  for (int s = 0; s < kCompileStages; ++s) {
    if (t->stage_ns[s] <= 0) continue;
    stages << QString("<span style='color:%1'>■</span> %2 %3")
                  .arg(kStages[s].color.name(), kStages[s].title, format_ns(static_cast<double>(t->stage_ns[s])));
  }
  if (!stages.isEmpty()) text += " · " + stages.join(" · ");
  if (t->cache.any()) {
    text += QString("<br>caches: FX graph %1 · AOTAutograd %2")
                .arg(cache_text(t->cache.fx_hits, t->cache.fx_misses), cache_text(t->cache.aot_hits, t->cache.aot_misses));
  }
  summary_->setText(text);

  QVector<TableModel::Row> rows;
  for (const analysis::CompileTime& c : t->compiles) {
    TableModel::Row row{TableModel::text(QString::fromStdString(c.compile_label)),
                        TableModel::text(QString::fromStdString(c.frame)),
                        TableModel::duration(static_cast<double>(c.total_ns))};
    for (int s = 0; s < kCompileStages; ++s) row << TableModel::duration(static_cast<double>(c.stage_ns[s]));
    row << TableModel::text(cache_text(c.cache.fx_hits, c.cache.fx_misses))
        << TableModel::text(cache_text(c.cache.aot_hits, c.cache.aot_misses));
    rows << row;
  }
  compile_model_->setRows(rows);

  QVector<TableModel::Row> repeats;
  for (const analysis::RepeatedGraph& r : t->repeated) {
    const QString advice = QString::fromStdString(analysis::advice(r));
    repeats << TableModel::Row{TableModel::text(advice, advice),
                               TableModel::duration(static_cast<double>(r.avoidable_ns))};
  }
  for (const analysis::RepeatedBlocks& b : t->blocks) {
    const QString advice = QString::fromStdString(analysis::advice(b));
    repeats << TableModel::Row{TableModel::text(advice, advice), TableModel::duration(static_cast<double>(b.saving_ns))};
  }
  repeat_model_->setRows(repeats);
  compile_table_->resizeColumnsToContents();
  showChart();
}

// One horizontal bar per compile, split by stage: the longest kMaxBars compiles, in compile order
// from the top.
void CompileTimeView::showChart() {
  QChart* chart = chart_->chart();
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  const analysis::CompileTimeReport* t = run_ ? &run_->compile_time : nullptr;
  if (!t || t->compiles.empty()) {
    chart->setTitle("No compiles in this run");
    return;
  }
  std::vector<const analysis::CompileTime*> shown;
  for (const auto& c : t->compiles) shown.push_back(&c);
  if (shown.size() > static_cast<size_t>(kMaxBars)) {
    std::stable_sort(shown.begin(), shown.end(), [](auto* a, auto* b) { return a->total_ns > b->total_ns; });
    shown.resize(kMaxBars);
    std::stable_sort(shown.begin(), shown.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
  }
  chart->setTitle(shown.size() < t->compiles.size()
                      ? QString("The %1 longest of %2 compiles").arg(shown.size()).arg(t->compiles.size())
                      : QString());
  int64_t longest = 1;
  for (const auto* c : shown) longest = std::max(longest, c->total_ns);
  // Seconds or milliseconds, whichever keeps the axis readable.
  const bool seconds = longest >= 2'000'000'000;
  const double unit = seconds ? 1e9 : 1e6;
  auto* series = new QHorizontalStackedBarSeries;
  QStringList categories;
  // Bars are drawn bottom-up: reversed, the first compile is at the top.
  for (auto it = shown.rbegin(); it != shown.rend(); ++it) {
    const auto* c = *it;
    // The compile id alone: frame names (torch_dynamo_resume_in_forward_at_43) are in the table.
    categories << QString::fromStdString(c->compile_label);
  }
  for (int s = 0; s < kCompileStages; ++s) {
    auto* set = new QBarSet(kStages[s].title);
    set->setColor(kStages[s].color);
    set->setBorderColor(kStages[s].color);
    bool any = false;
    for (auto it = shown.rbegin(); it != shown.rend(); ++it) {
      *set << static_cast<double>((*it)->stage_ns[s]) / unit;
      any = any || (*it)->stage_ns[s] > 0;
    }
    if (any) {
      series->append(set);
    } else {
      delete set;
    }
  }
  // Thin bars when there are few: one compile is a bar, not a wall.
  series->setBarWidth(std::min(0.7, 0.1 + 0.12 * static_cast<double>(shown.size())));
  chart->addSeries(series);
  auto* y = new QBarCategoryAxis;
  y->append(categories);
  y->setTruncateLabels(false);
  auto* x = new QValueAxis;
  x->setTitleText(seconds ? "seconds" : "milliseconds");
  x->setRange(0, static_cast<double>(longest) / unit * 1.05);
  x->applyNiceNumbers();
  x->setLabelFormat(seconds ? "%g" : "%.0f");
  chart->addAxis(y, Qt::AlignLeft);
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(y);
  series->attachAxis(x);
}

}  // namespace tcprof::gui
