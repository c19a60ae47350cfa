#include "gui/ranks_view.h"

#include <QSplitter>
#include <QVBoxLayout>

#include "gui/format.h"
#include "gui/table_view.h"

namespace tcprof::gui {

RanksView::RanksView(QWidget* parent)
    : RunView(parent),
      summary_(new QLabel),
      rank_model_(new TableModel({"Rank", "Run", "Status", "Frames", "Compiles", "Recompiles", "Graph breaks"}, this)),
      divergence_model_(new TableModel({"Divergence", "In", "Ranks", "Why the first rank compiled it"}, this)),
      rank_table_(make_row_table(rank_model_)) {
  summary_->setWordWrap(true);
  summary_->setTextFormat(Qt::RichText);
  QTableView* divergence_table = make_row_table(divergence_model_);
  auto* top = new QWidget;
  auto* top_layout = new QVBoxLayout(top);
  top_layout->setContentsMargins(0, 0, 0, 0);
  top_layout->addWidget(new QLabel("<b>Ranks</b> of this job (double-click or Enter to show one)"));
  top_layout->addWidget(rank_table_);
  auto* bottom = new QWidget;
  auto* bottom_layout = new QVBoxLayout(bottom);
  bottom_layout->setContentsMargins(0, 0, 0, 0);
  bottom_layout->addWidget(new QLabel("<b>Where the ranks diverge</b>, earliest first"));
  bottom_layout->addWidget(divergence_table);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(top);
  split->addWidget(bottom);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);
  connect(rank_table_, &QTableView::activated, this, [this](const QModelIndex& index) {
    if (!run_ || index.row() >= static_cast<int>(run_->ranks.ranks.size())) return;
    const Id id = run_->ranks.ranks[static_cast<size_t>(index.row())].run_id;
    if (id != run_->run.id) emit rankChosen(id);
  });
}

void RanksView::setRun(const RunDataPtr& run) {
  run_ = run;
  QVector<TableModel::Row> ranks, items;
  if (!run_ || run_->ranks.ranks.empty()) {
    summary_->setText(run_ && run_->run.world_size > 1
                          ? "The other ranks of this job are not in this file: import every rank's log together "
                            "(<tt>tcprof import DIR</tt>) to compare them."
                          : "This run is not part of a multi-rank job. Import a distributed job's TORCH_TRACE "
                            "folder (one log per rank) to compare its ranks here.");
    rank_model_->setRows({});
    divergence_model_->setRows({});
    return;
  }
  const analysis::RankDivergence& d = run_->ranks;
  for (const analysis::RankRun& r : d.ranks) {
    const bool self = r.run_id == run_->run.id;
    TableModel::Row row;
    row << TableModel::number(r.rank, self ? QString("%1 (shown)").arg(r.rank) : QString::number(r.rank))
        << TableModel::number(static_cast<double>(r.run_id), QString("#%1").arg(r.run_id))
        << TableModel::text(q(r.status)) << TableModel::count(r.frames) << TableModel::count(r.compiles)
        << TableModel::count(r.recompiles) << TableModel::count(r.graph_breaks);
    ranks << row;
  }
  for (const analysis::DivergenceItem& item : d.items) {
    const QColor colour = item.kind == "compile_on_some_ranks" ? QColor(0xc0, 0x39, 0x2b) : QColor(0xb9, 0x77, 0x0e);
    TableModel::Row row;
    row << TableModel::text(q(analysis::divergence_what(item.kind)), q(item.kind))
        << TableModel::text(q(item.subject)) << TableModel::text(q(item.detail), q(item.detail))
        << TableModel::text(q(item.reason), q(item.reason));
    row[0].foreground = colour;
    items << row;
  }
  rank_model_->setRows(ranks);
  divergence_model_->setRows(items);
  QString text = QString("Rank <b>%1</b> of %2 · %3 ranks in this file · ")
                     .arg(run_->run.rank).arg(run_->run.world_size).arg(d.ranks.size());
  text += d.items.empty() ? QString("<span style='color:#1e8449'>all ranks compiled the same</span>")
                          : QString("<span style='color:#c0392b'><b>%1</b> difference(s)</span>; the first: %2 %3")
                                .arg(d.items.size())
                                .arg(html_escape(q(analysis::divergence_what(d.items.front().kind))),
                                     html_escape(q(d.items.front().subject)));
  summary_->setText(text);
  for (auto* table : findChildren<QTableView*>()) table->resizeColumnsToContents();
  for (int row = 0; row < ranks.size(); ++row) {
    if (d.ranks[static_cast<size_t>(row)].run_id == run_->run.id) rank_table_->selectRow(row);
  }
}

}  // namespace tcprof::gui
