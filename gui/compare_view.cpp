#include "gui/compare_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QSplitter>
#include <QVBoxLayout>

#include "gui/format.h"
#include "gui/table_view.h"

namespace tcprof::gui {
namespace {

QString cache_key(const QString& path, Id id) { return path + '\n' + QString::number(id); }
const QColor kWorse(0xb3, 0x26, 0x1e), kBetter(0x2d, 0x6a, 0x4f);

}  // namespace

CompareView::CompareView(QWidget* parent)
    : RunView(parent),
      loader_(new DbLoader(this)),
      a_(new QComboBox),
      b_(new QComboBox),
      headline_(new QLabel),
      count_model_(new TableModel({"Metric", "A", "B", "Change"}, this)),
      break_model_(new TableModel({"Change", "Type", "Op", "Location", "Module", "Count A", "Count B"}, this)),
      kernel_model_(new TableModel({"Kernel", "Total A", "Total B", "Change", "Change %", "Instances A", "Instances B"}, this)) {
  auto* pick = new QHBoxLayout;
  pick->addWidget(new QLabel("<b>A</b>"));
  pick->addWidget(a_, 1);
  pick->addWidget(new QLabel("<b>vs B</b>"));
  pick->addWidget(b_, 1);
  headline_->setTextFormat(Qt::RichText);
  headline_->setWordWrap(true);

  auto* top = new QSplitter(Qt::Horizontal);
  top->addWidget(titled("<b>Counts</b>", make_row_table(count_model_, 0)));
  top->addWidget(titled("<b>Graph-break sites</b> (added in B, removed in B, in both)", make_row_table(break_model_, 1)));
  top->setStretchFactor(0, 2);
  top->setStretchFactor(1, 3);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(top);
  split->addWidget(titled("<b>Kernel time per name</b> (B − A, biggest change first)", make_row_table(kernel_model_, 0)));

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(pick);
  layout->addWidget(headline_);
  layout->addWidget(split, 1);

  connect(a_, &QComboBox::currentIndexChanged, this, &CompareView::request);
  connect(b_, &QComboBox::currentIndexChanged, this, &CompareView::request);
  connect(loader_, &DbLoader::runLoaded, this, [this](int, RunDataPtr data) {
    cache_.insert(cache_key(data->path, data->run.id), data);
    request();
  });
  connect(loader_, &DbLoader::failed, this, [this](int, const QString&, const QString& message) {
    headline_->setText(QString("<span style='color:#b3261e'>%1</span>").arg(html_escape(message)));
  });
}

void CompareView::setAvailableRuns(const QVector<RunKey>& runs) {
  runs_ = runs;
  for (QComboBox* box : {a_, b_}) {
    const int keep = box->currentIndex();
    box->blockSignals(true);
    box->clear();
    for (const RunKey& k : runs_) box->addItem(k.title, k.path);
    box->setCurrentIndex(keep >= 0 && keep < box->count() ? keep : -1);
    box->blockSignals(false);
  }
}

void CompareView::setRun(const RunDataPtr& run) {
  run_ = run;
  if (!run) return;
  // Live refreshes replace the cached copy so the comparison follows the growing run.
  cache_.insert(cache_key(run->path, run->run.id), run);
  int a = -1;
  for (int i = 0; i < runs_.size(); ++i) {
    if (runs_[i].path == run->path && runs_[i].run_id == run->run.id) a = i;
  }
  if (a < 0) return;
  int b = b_->currentIndex();
  if (b < 0 || b == a) b = runs_.size() > 1 ? (a == 0 ? 1 : a - 1) : a;
  comparePair(a, b);
}

void CompareView::comparePair(int a_index, int b_index) {
  a_->blockSignals(true);
  b_->blockSignals(true);
  a_->setCurrentIndex(a_index);
  b_->setCurrentIndex(b_index);
  a_->blockSignals(false);
  b_->blockSignals(false);
  request();
}

RunDataPtr CompareView::cached(const RunKey& key) const { return cache_.value(cache_key(key.path, key.run_id)); }

void CompareView::request() {
  const int a = a_->currentIndex(), b = b_->currentIndex();
  if (a < 0 || b < 0 || a >= runs_.size() || b >= runs_.size()) return;
  RunDataPtr da = cached(runs_[a]), db = cached(runs_[b]);
  if (!da || !db) {
    headline_->setText("Loading…");
    // One request at a time: the answer re-enters request(), which asks for the other one.
    if (loader_->pending() == 0) {
      const RunKey& missing = da ? runs_[b] : runs_[a];
      loader_->loadRun(missing.path, missing.run_id);
    }
    return;
  }
  show(*da, *db);
  emit comparisonReady();
}

void CompareView::show(const RunData& a, const RunData& b) {
  const RunComparison cmp = compare_runs(a, b);
  QString headline = QString("<b>A</b> %1 &nbsp;→&nbsp; <b>B</b> %2<br>")
                         .arg(html_escape(a.title()), html_escape(b.title()));
  if (&a == &b) headline += "Comparing a run with itself: open a second database or pick another run as B. ";
  headline += QString("<span style='color:%1'>%2 break site(s) added</span>, "
                      "<span style='color:%3'>%4 removed</span>; recompiles %5 → %6.")
                  .arg(cmp.added() > 0 ? kWorse.name() : "#555").arg(cmp.added())
                  .arg(cmp.removed() > 0 ? kBetter.name() : "#555").arg(cmp.removed())
                  .arg(a.summary.counts.recompiles).arg(b.summary.counts.recompiles);
  if (!cmp.changes.kernel_caveat.empty()) {
    headline += QString("<br><span style='color:%1'>%2</span>").arg(kWorse.name(), html_escape(QString::fromStdString(cmp.changes.kernel_caveat)));
  }
  headline_->setText(headline);

  QVector<TableModel::Row> counts;
  for (const CountChange& c : cmp.counts) {
    const double d = c.b - c.a;
    auto shown = [&](double v) { return c.is_time_ms ? QString::number(v, 'f', 3) : format_count(static_cast<int64_t>(v)); };
    TableCell delta = TableModel::number(d, d == 0 ? QString("=") : (d > 0 ? "+" : "") + shown(d));
    if (d != 0 && c.lower_is_better) delta.foreground = d > 0 ? kWorse : kBetter;
    counts << TableModel::Row{TableModel::text(c.metric), TableModel::number(c.a, shown(c.a)),
                              TableModel::number(c.b, shown(c.b)), delta};
  }
  count_model_->setRows(counts);

  QVector<TableModel::Row> breaks;
  using Kind = analysis::SiteChange::Kind;
  for (const analysis::SiteChange& c : cmp.changes.sites) {
    TableCell kind = TableModel::text(c.kind == Kind::Added ? "added" : (c.kind == Kind::Removed ? "removed" : "both"));
    if (c.kind == Kind::Added) kind.foreground = kWorse;
    if (c.kind == Kind::Removed) kind.foreground = kBetter;
    breaks << TableModel::Row{kind, TableModel::text(q(c.site.type)), TableModel::text(q(c.site.op)),
                              TableModel::text(QString("%1:%2").arg(q(c.site.file)).arg(c.site.line), q(c.site.reason)),
                              TableModel::text(c.site.module_path.empty() ? QString("(root)") : q(c.site.module_path)),
                              TableModel::count(c.a),
                              TableModel::count(c.b)};
  }
  break_model_->setRows(breaks);

  QVector<TableModel::Row> kernels;
  for (const analysis::TimeDelta& k : cmp.changes.kernels) {
    const double d = static_cast<double>(k.delta());
    TableCell delta = TableModel::number(d, d == 0 ? QString("=") : (d > 0 ? "+" : "") + format_ns(d));
    if (d != 0) delta.foreground = d > 0 ? kWorse : kBetter;
    const double pct = k.a_ns > 0 ? 100.0 * d / static_cast<double>(k.a_ns) : 0;
    TableCell percent = TableModel::number(pct, k.a_ns == 0 ? QString("new") : (d == 0 ? QString("=") : QString("%1%2%").arg(pct > 0 ? "+" : "").arg(pct, 0, 'f', 1)));
    percent.foreground = delta.foreground;
    kernels << TableModel::Row{TableModel::text(QString::fromStdString(k.name)), TableModel::duration(double(k.a_ns)),
                               TableModel::duration(double(k.b_ns)), delta, percent,
                               TableModel::count(k.a_count), TableModel::count(k.b_count)};
  }
  kernel_model_->setRows(kernels);
  for (auto* view : findChildren<QTableView*>()) view->resizeColumnsToContents();
}

}  // namespace tcprof::gui
