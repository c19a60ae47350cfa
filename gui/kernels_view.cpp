#include "gui/kernels_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSplitter>
#include <QVBoxLayout>

#include "analysis/kernel_stats.h"
#include "gui/format.h"

namespace tcprof::gui {

KernelsView::KernelsView(QWidget* parent)
    : RunView(parent),
      timeline_(new KernelTimeline),
      model_(new KernelTableModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView),
      range_label_(new QLabel),
      name_filter_(new QLineEdit),
      place_filter_(new QComboBox),
      selection_label_(new QLabel) {
  place_filter_->addItem("All kernels", -1);
  place_filter_->addItem("GPU work", static_cast<int>(analysis::KernelPlace::Gpu));
  place_filter_->addItem("CPU kernels and eager ops", static_cast<int>(analysis::KernelPlace::Host));
  place_filter_->addItem("CUDA API calls", static_cast<int>(analysis::KernelPlace::CudaApi));
  place_filter_->addItem("Copies to the GPU outside calls", static_cast<int>(analysis::KernelPlace::OutsideCalls));
  place_filter_->setToolTip("GPU work, host kernels and CUDA API calls are ranked apart, as in report --kernels");
  connect(place_filter_, &QComboBox::currentIndexChanged, this, [this] { applyRange(timeline_->selectedRange()); });
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(KernelTableModel::SortRole);
  proxy_->setFilterKeyColumn(KernelTableModel::Name);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  name_filter_->setPlaceholderText("Filter kernels by name…");
  name_filter_->setClearButtonEnabled(true);
  name_filter_->setMinimumWidth(200);
  name_filter_->setMaximumWidth(260);
  connect(name_filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(KernelTableModel::Total, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAlternatingRowColors(true);

  auto* reset = new QPushButton("Show all");
  reset->setToolTip("Zoom out to the whole run (0)");
  auto* clear = new QPushButton("Clear range");
  clear->setToolTip("Show every kernel in the table again (Esc)");
  auto* hint = new QLabel("Scroll: zoom · drag: pan · Shift+drag: range · click: select · N/P: next/previous");
  hint->setStyleSheet("color: palette(placeholder-text)");
  // Labels give way first when the window is narrow (they must not set its minimum width).
  hint->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  range_label_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  selection_label_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  auto* bar = new QHBoxLayout;
  bar->addWidget(range_label_, 3);
  bar->addWidget(place_filter_);
  bar->addWidget(name_filter_);
  bar->addWidget(hint, 2);
  bar->addWidget(reset);
  bar->addWidget(clear);

  auto* scroll = new QScrollArea;  // many streams: lanes scroll vertically
  scroll->setWidget(timeline_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  selection_label_->setTextFormat(Qt::RichText);
  selection_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* top = new QWidget;  // timeline with the selected kernel's details under it
  auto* top_layout = new QVBoxLayout(top);
  top_layout->setContentsMargins(0, 0, 0, 0);
  top_layout->setSpacing(2);
  top_layout->addWidget(scroll, 1);
  top_layout->addWidget(selection_label_);
  split_ = new QSplitter(Qt::Vertical);
  split_->addWidget(top);
  split_->addWidget(table_);
  split_->setStretchFactor(0, 1);
  split_->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(split_, 1);

  connect(reset, &QPushButton::clicked, timeline_, &KernelTimeline::resetView);
  connect(clear, &QPushButton::clicked, this, [this] { timeline_->setSelectedRange({}); });
  connect(timeline_, &KernelTimeline::rangeSelected, this, &KernelsView::applyRange);
  connect(timeline_, &KernelTimeline::kernelSelected, this, &KernelsView::selectNameInTable);
  connect(timeline_, &KernelTimeline::selectionChanged, this, &KernelsView::updateSelectionLabel);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (syncing_ || !current.isValid()) return;
            syncing_ = true;
            timeline_->revealName(current.data(KernelTableModel::NameIndexRole).toInt());
            syncing_ = false;
          });
}

void KernelsView::setRun(const RunDataPtr& run) {
  // A live refresh of the same run keeps zoom and range; a different run starts fresh.
  const bool same_run = run_ && run && run_->path == run->path && run_->run.id == run->run.id;
  run_ = run;
  timeline_->setRun(run, same_run);
  updateSelectionLabel();
  if (!same_run) {
    // A CUDA run opens on its GPU work; a CPU run on everything (it has one place).
    bool has_gpu = false;
    for (const auto& k : run ? run->kernel_summary : std::vector<analysis::KernelStats>{}) {
      has_gpu = has_gpu || analysis::kernel_place(k.kind) == analysis::KernelPlace::Gpu;
    }
    const QSignalBlocker quiet(place_filter_);
    place_filter_->setCurrentIndex(has_gpu ? 1 : 0);
    // Give the timeline the height its lanes need (up to 60%), the table the rest.
    const int total = std::max(400, split_->height());
    const int timeline = std::min(timeline_->sizeHint().height() + 30, total * 6 / 10);
    split_->setSizes({timeline, total - timeline});
  }
  applyRange(same_run ? timeline_->selectedRange() : TimeRange{});
  table_->resizeColumnsToContents();
}

void KernelsView::applyRange(TimeRange range) {
  if (!run_) {
    model_->setRows(run_, {});
    return;
  }
  const QString selected = selectedTableName();
  std::vector<analysis::KernelStats> rows = range.empty() ? run_->kernel_summary : run_->kernels.summarize(range);
  const int place = place_filter_->currentData().toInt();
  if (place >= 0) rows = analysis::stats_of_place(rows, static_cast<analysis::KernelPlace>(place));
  model_->setRows(run_, std::move(rows));
  if (!selected.isEmpty()) selectNameInTable(run_->kernels.name_index(selected));
  updateRangeLabel();
}

void KernelsView::updateRangeLabel() {
  const TimeRange r = timeline_->selectedRange();
  const double origin = run_ ? static_cast<double>(run_->time_range.start_ns) : 0;
  int64_t instances = 0;
  for (int i = 0; i < model_->rowCount(); ++i) instances += model_->summaryRow(i).instances;
  if (run_ && run_->kernels.total == 0) {
    range_label_->setText("<b>No kernels recorded</b> in this run: calls and compiles only");
    return;
  }
  range_label_->setText(
      r.empty() ? QString("<b>%1</b> kernels, %2 names").arg(format_count(instances)).arg(model_->rowCount())
                : QString("<b>%1</b> kernels starting in %2 – %3")
                      .arg(format_count(instances),
                           format_ns(static_cast<double>(r.start_ns) - origin),
                           format_ns(static_cast<double>(r.end_ns) - origin)));
  // A sampling summary: say how many calls the GPU rows come from (the same words as report).
  const analysis::GpuCallCoverage gpu = run_ ? run_->gpu_calls : analysis::GpuCallCoverage{};
  if (gpu.sampled()) {
    range_label_->setText(range_label_->text() + QString(" · GPU: %1 of %2 calls")
                                                     .arg(format_count(gpu.recorded), format_count(gpu.recorded + gpu.skipped)));
  }
  range_label_->setToolTip(QString::fromStdString(gpu.text()));
}

void KernelsView::updateSelectionLabel() {
  const KernelTimeline::KernelRef ref = timeline_->selectedKernel();
  if (!run_ || !ref.valid()) {
    selection_label_->setText("<span style='color:#666'>No kernel selected: click one, or pick a row below.</span>");
    return;
  }
  const KernelLane& lane = run_->kernels.lanes[static_cast<size_t>(ref.lane)];
  const uint32_t name = lane.name[ref.index];
  const double origin = static_cast<double>(run_->time_range.start_ns);
  selection_label_->setText(QString("Selected <b>%1</b> (%2) · %3 · starts at %4 · %5 · graph %6 · N/P: other instances")
                                .arg(html_escape(run_->kernels.names[name]), run_->kernels.kinds[name],
                                     format_ns(static_cast<double>(lane.duration[ref.index])),
                                     format_ns(static_cast<double>(lane.start[ref.index]) - origin), lane.label)
                                .arg(lane.graph_id[ref.index] & 0xffffffff));
}

void KernelsView::selectNameInTable(int name) {
  if (syncing_ || name < 0) return;
  int row = model_->rowOfName(static_cast<uint32_t>(name));
  if (row < 0 && place_filter_->currentIndex() != 0) {
    // A kernel picked on the timeline from another place (a CPU op while the table shows GPU
    // work): show every place so its row can be selected.
    place_filter_->setCurrentIndex(0);  // re-applies the range
    row = model_->rowOfName(static_cast<uint32_t>(name));
  }
  if (row < 0) return;
  syncing_ = true;
  const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
  table_->selectionModel()->setCurrentIndex(
      index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  table_->scrollTo(index);
  syncing_ = false;
}

QString KernelsView::selectedTableName() const {
  const QModelIndex current = table_->currentIndex();
  if (!current.isValid() || !run_) return {};
  return current.sibling(current.row(), KernelTableModel::Name).data().toString();
}

}  // namespace tcprof::gui
