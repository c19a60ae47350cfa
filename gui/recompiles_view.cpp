#include "gui/recompiles_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QSplitter>
#include <QVBoxLayout>

#include "gui/format.h"
#include "gui/table_view.h"
#include "gui/source_lookup.h"

namespace tcprof::gui {

RecompilesView::RecompilesView(QWidget* parent)
    : RunView(parent),
      frames_(new QComboBox),
      legend_(new QLabel),
      timeline_(new CallTimeline),
      recompile_model_(new TableModel({"Compile", "Call", "Cache size", "Failed guard", "Reason"}, this)),
      failure_model_(new TableModel({"Guard", "Kind", "Expected", "Actual", "Guard created at", "Message"}, this)),
      recompile_table_(make_row_table(recompile_model_)),
      failure_table_(make_row_table(failure_model_)),
      source_(new SourceView),
      chart_(new ShapeChart) {
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel("Frame:"));
  top->addWidget(frames_);
  frames_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  top->addWidget(legend_, 1);
  legend_->setTextFormat(Qt::RichText);

  auto* failures_box = new QWidget;
  auto* failures_layout = new QVBoxLayout(failures_box);
  failures_layout->setContentsMargins(0, 0, 0, 0);
  failures_layout->addWidget(new QLabel("<b>Guard failures</b> of the call that forced the selected recompile"));
  failures_layout->addWidget(failure_table_, 2);
  failures_layout->addWidget(source_, 1);
  source_->setMaximumHeight(140);

  auto* recompiles_box = new QWidget;
  auto* recompiles_layout = new QVBoxLayout(recompiles_box);
  recompiles_layout->setContentsMargins(0, 0, 0, 0);
  recompiles_layout->addWidget(new QLabel("<b>Recompiles</b>"));
  recompiles_layout->addWidget(recompile_table_);

  auto* middle = new QSplitter(Qt::Horizontal);
  middle->addWidget(recompiles_box);
  middle->addWidget(failures_box);
  middle->setStretchFactor(0, 1);
  middle->setStretchFactor(1, 1);

  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(middle);
  split->addWidget(chart_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  chart_->setMinimumHeight(240);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(timeline_);
  layout->addWidget(split, 1);

  connect(frames_, &QComboBox::currentIndexChanged, this, &RecompilesView::showFrame);
  connect(recompile_table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { showRecompile(current.row()); });
  connect(failure_table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            const int row = recompile_table_->currentIndex().row();
            if (current.isValid() && row >= 0 && row < static_cast<int>(shown_.size())) {
              showGuardSource(shown_[static_cast<size_t>(row)]->failures[static_cast<size_t>(current.row())]);
            }
          });
  connect(timeline_, &CallTimeline::callClicked, this, [this](Id call_id) {
    for (size_t i = 0; i < shown_.size(); ++i) {
      if (shown_[i]->call_id == call_id) recompile_table_->setCurrentIndex(recompile_model_->index(static_cast<int>(i), 0));
    }
  });
}

void RecompilesView::setRun(const RunDataPtr& run) {
  const int frame = frames_->currentIndex();
  const int selected = recompile_table_->currentIndex().row();
  const bool same_run = run_ && run && run_->path == run->path && run_->run.id == run->run.id;
  run_ = run;
  frames_->blockSignals(true);
  frames_->clear();
  if (run_) {
    for (const FrameRow& f : run_->frames) {
      int calls = 0, recompiles = 0;
      for (const auto& c : run_->calls) calls += c.frame_id == f.id;
      for (const auto& r : run_->recompiles) recompiles += r.frame_id == f.id;
      QString label = q(f.name);
      if (!f.module_path.empty()) label += QString(" [%1]").arg(q(f.module_path));
      frames_->addItem(QString("%1 — %2 call(s), %3 recompile(s)").arg(label).arg(calls).arg(recompiles));
    }
  }
  // Start on the frame with the most recompiles: that is the one worth looking at.
  int start = 0;
  if (!same_run && run_) {
    size_t best = 0;
    for (size_t i = 0; i < run_->frames.size(); ++i) {
      size_t n = 0;
      for (const auto& r : run_->recompiles) n += r.frame_id == run_->frames[i].id;
      if (n > best) {
        best = n;
        start = static_cast<int>(i);
      }
    }
  } else if (frame >= 0 && frame < frames_->count()) {
    start = frame;
  }
  frames_->setCurrentIndex(frames_->count() > 0 ? start : -1);
  frames_->blockSignals(false);
  showFrame(frames_->currentIndex());
  if (same_run && selected >= 0 && selected < recompile_model_->rowCount()) {
    recompile_table_->setCurrentIndex(recompile_model_->index(selected, 0));
  }
}

void RecompilesView::showFrame(int index) {
  shown_.clear();
  const FrameRow* frame = run_ && index >= 0 && index < static_cast<int>(run_->frames.size())
                              ? &run_->frames[static_cast<size_t>(index)] : nullptr;
  const Id frame_id = frame ? frame->id : -1;
  timeline_->setCalls(run_, frame_id);
  chart_->setCalls(run_, frame_id);
  QVector<TableModel::Row> rows;
  QString legend;
  if (run_) {
    for (const auto& r : run_->recompiles) {
      if (r.frame_id != frame_id) continue;
      shown_.push_back(&r);
      TableModel::Row row;
      TableCell label = TableModel::text(q(r.compile_label));
      label.foreground = timeline_->entryColor(r.compile_id).darker(130);
      int call_index = 0;  // position of the forcing call among the frame's calls
      for (const auto& call : run_->calls) {
        if (call.id == r.call_id) break;
        call_index += call.frame_id == frame_id;
      }
      QString guard = r.failures.empty() ? QString("—") : q(r.failures.front().guard_expr);
      if (r.failures.size() > 1) guard += QString(" (+%1)").arg(r.failures.size() - 1);
      row << label << TableModel::number(call_index, QString("#%1").arg(call_index))
          << TableModel::count(r.cache_size) << TableModel::text(guard)
          << TableModel::text(q(r.reason), q(r.reason));
      rows << row;
    }
    for (const auto& c : run_->compiles) {
      if (c.frame_id != frame_id) continue;
      int served = 0;
      for (const auto& call : run_->calls) served += call.compile_id == c.id;
      legend += QString("&nbsp;&nbsp;<span style='background:%1'>&nbsp;&nbsp;&nbsp;&nbsp;</span> %2 "
                        "<span style='color:#555'>(%3 call(s))</span>")
                    .arg(timeline_->entryColor(c.id).name(), html_escape(q(c.compile_label)))
                    .arg(served);
    }
  }
  int eager = 0;
  for (const auto& call : run_ ? run_->calls : std::vector<CallRow>{}) eager += call.frame_id == frame_id && call.path != "compiled";
  if (eager > 0) {
    legend += QString("&nbsp;&nbsp;<span style='background:#b0b0b0'>&nbsp;&nbsp;&nbsp;&nbsp;</span> eager "
                      "<span style='color:#555'>(%1 call(s))</span>").arg(eager);
  }
  legend_->setText(legend.isEmpty() ? QString() : "Cache entries:" + legend);
  recompile_model_->setRows(rows);
  recompile_table_->resizeColumnsToContents();
  if (!rows.isEmpty()) {
    recompile_table_->setCurrentIndex(recompile_model_->index(0, 0));
  } else {
    failure_model_->setRows({});
    source_->clearSource(run_ && frame ? "No recompiles for this frame." : "");
  }
}

void RecompilesView::showRecompile(int row) {
  if (row < 0 || row >= static_cast<int>(shown_.size())) {
    failure_model_->setRows({});
    return;
  }
  const RecompileRow& r = *shown_[static_cast<size_t>(row)];
  timeline_->setSelectedCall(r.call_id);
  QVector<TableModel::Row> rows;
  for (const GuardFailureRow& f : r.failures) {
    TableModel::Row cells;
    TableCell expected = TableModel::text(q(f.expected));
    expected.foreground = QColor(0x2d, 0x6a, 0x4f);
    TableCell actual = TableModel::text(q(f.actual));
    actual.foreground = QColor(0xb3, 0x26, 0x1e);
    const QString at = f.guard_file.empty() ? QString("?") : QString("%1:%2").arg(q(f.guard_file)).arg(f.guard_line);
    cells << TableModel::text(q(f.guard_expr)) << TableModel::text(q(f.guard_kind)) << expected << actual
          << TableModel::text(at) << TableModel::text(q(f.message), q(f.message));
    rows << cells;
  }
  failure_model_->setRows(rows);
  failure_table_->resizeColumnsToContents();
  if (!rows.isEmpty()) failure_table_->setCurrentIndex(failure_model_->index(0, 0));
  else source_->clearSource(QString("No guard failure was recorded for this recompile: %1").arg(q(r.reason)));
}

void RecompilesView::showGuardSource(const GuardFailureRow& f) {
  if (f.guard_file.empty() || f.guard_line <= 0) {
    source_->clearSource(QString("The run did not record which source line created guard %1.").arg(q(f.guard_expr)));
    return;
  }
  show_source(source_, *run_, f.guard_file, f.guard_line,
              QString("# guard %1 created here (source text not recorded)").arg(q(f.guard_expr)));
}

}  // namespace tcprof::gui
