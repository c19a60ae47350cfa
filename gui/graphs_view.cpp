#include "gui/graphs_view.h"

#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSplitter>
#include <QTextBlock>
#include <QVBoxLayout>

#include "analysis/hint_groups.h"
#include "gui/cpp_highlighter.h"
#include "gui/format.h"
#include "gui/table_view.h"

namespace tcprof::gui {
namespace {



QPlainTextEdit* make_code_view() {
  auto* e = new QPlainTextEdit;
  e->setReadOnly(true);
  e->setLineWrapMode(QPlainTextEdit::NoWrap);
  e->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  new CppHighlighter(e->document());
  return e;
}

}  // namespace

GraphsView::GraphsView(QWidget* parent)
    : RunView(parent),
      graph_model_(new TableModel({"Graph", "Frame", "Ops", "Guards", "Kernel time", "Compile reason"}, this)),
      guard_model_(new TableModel({"Kind", "Guard", "Created at"}, this)),
      hint_model_(new TableModel({"Kind", "Op", "Times", "Message", "At"}, this)),
      graph_table_(make_row_table(graph_model_)),
      tabs_(new QTabWidget),
      ir_(make_code_view()),
      code_(make_code_view()) {
  // Guards stay visible above the code: "what must hold for this graph to be reused" is read
  // together with the graph itself.
  tabs_->addTab(code_, "Generated code");
  tabs_->addTab(ir_, "IR");
  tabs_->addTab(make_row_table(hint_model_), "Perf hints");
  QTableView* guard_table = make_row_table(guard_model_);
  guard_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  auto* guards = new QWidget;
  auto* guards_layout = new QVBoxLayout(guards);
  guards_layout->setContentsMargins(0, 0, 0, 0);
  guards_layout->addWidget(new QLabel("<b>Guards</b> of the selected graph's compile"));
  guards_layout->addWidget(guard_table);
  auto* right = new QSplitter(Qt::Vertical);
  right->addWidget(guards);
  right->addWidget(tabs_);
  right->setStretchFactor(0, 1);
  right->setStretchFactor(1, 3);
  auto* left = new QWidget;
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(new QLabel("<b>Compiled graphs</b>"));
  left_layout->addWidget(graph_table_);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);
  connect(graph_table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { showGraph(current.row()); });
}

void GraphsView::setRun(const RunDataPtr& run) {
  const int selected = graph_table_->currentIndex().row();
  run_ = run;
  QVector<TableModel::Row> rows;
  if (run_) {
    std::map<Id, int64_t> kernel_ns;  // per graph, from the loaded kernels
    for (const auto& lane : run_->kernels.lanes) {
      for (size_t i = 0; i < lane.size(); ++i) kernel_ns[lane.graph_id[i]] += lane.duration[i];
    }
    for (const GraphRow& g : run_->graphs) {
      int guards = 0;
      for (const auto& guard : run_->guards) guards += guard.compile_id == g.compile_id;
      const CompileRow* c = run_->compile(g.compile_id);
      const FrameRow* frame = c ? run_->frame(c->frame_id) : nullptr;
      // The compile id names a graph as Dynamo's logs do ("0/1"); an imported compile has several
      // graphs (dynamo, aot_forward, ...), told apart by their kind.
      // A graph without a compile (the training step's optimizer) is named by its kind alone.
      QString label = q(g.compile_label);
      if (g.kind != "captured") label += (label.isEmpty() ? "" : " ") + q(g.kind);
      TableModel::Row row;
      row << TableModel::text(label) << TableModel::text(frame ? q(frame->name) : QString())
          << TableModel::count(g.op_count) << TableModel::count(guards)
          << TableModel::duration(static_cast<double>(kernel_ns[g.id]))
          << TableModel::text(c ? q(c->reason) : QString(), c ? q(c->reason) : QString());
      rows << row;
    }
    QVector<TableModel::Row> hints;
    for (const analysis::PerfHintGroup& h : analysis::group_perf_hints(run_->perf_hints)) {
      hints << TableModel::Row{TableModel::text(q(h.kind)), TableModel::text(q(h.op)), TableModel::count(h.count),
                               TableModel::text(q(h.message), q(h.message)),
                               TableModel::text(QString("%1:%2").arg(q(h.file)).arg(h.line))};
    }
    hint_model_->setRows(hints);
  }
  graph_model_->setRows(rows);
  graph_table_->resizeColumnsToContents();
  if (!rows.isEmpty()) {
    graph_table_->setCurrentIndex(graph_model_->index(selected >= 0 && selected < rows.size() ? selected : 0, 0));
  } else {
    showGraph(-1);
  }
}

void GraphsView::showGraph(int row) {
  if (!run_ || row < 0 || row >= static_cast<int>(run_->graphs.size())) {
    guard_model_->setRows({});
    ir_->setPlainText("");
    code_->setPlainText(run_ ? "No compiled graphs in this run." : "");
    return;
  }
  const GraphRow& g = run_->graphs[static_cast<size_t>(row)];
  QVector<TableModel::Row> guards;
  for (const GuardRow& guard : run_->guards) {
    if (guard.compile_id != g.compile_id) continue;
    guards << TableModel::Row{TableModel::text(q(guard.kind)), TableModel::text(q(guard.expr)),
                              TableModel::text(guard.file.empty() ? QString()
                                                                  : QString("%1:%2").arg(q(guard.file)).arg(guard.line))};
  }
  guard_model_->setRows(guards);
  for (auto* table : findChildren<QTableView*>()) {
    if (table->model() == guard_model_) table->resizeColumnToContents(0);
  }
  ir_->setPlainText(g.ir.empty() ? QString("// no IR recorded") : q(g.ir));
  code_->setPlainText(g.code.empty() ? QString("// no generated code recorded (eager or extern graph)") : q(g.code));
  // Open on the graph's own code, past the prelude every unit starts with.
  const int first = first_kernel_line(code_->toPlainText());
  code_->verticalScrollBar()->setValue(first);
  code_->setTextCursor(QTextCursor(code_->document()->findBlockByNumber(first)));
}

int GraphsView::first_kernel_line(const QString& code) {
  const QStringList lines = code.split('\n');
  for (int i = 0; i < lines.size(); ++i) {
    const QString& line = lines[i];
    if (!line.startsWith("extern \"C\"") && !line.startsWith("static __attribute__((noinline))")) continue;
    return i > 0 && lines[i - 1].startsWith("//") ? i - 1 : i;  // with the comment naming its ops
  }
  return 0;
}

}  // namespace tcprof::gui
