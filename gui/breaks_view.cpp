#include "gui/breaks_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSplitter>
#include <QVBoxLayout>

#include "gui/format.h"
#include "gui/source_lookup.h"

namespace tcprof::gui {
namespace {


// stack_json is a list of {file, line, function}; shown innermost last, like Python tracebacks.
QString stack_html(const std::string& json) {
  const QJsonArray frames = QJsonDocument::fromJson(QByteArray::fromStdString(json)).array();
  if (frames.isEmpty()) return "<i>no stack recorded</i>";
  QString out;
  for (const QJsonValue& v : frames) {
    const QJsonObject f = v.toObject();
    out += QString("<div style='font-family:monospace'>%1 &nbsp;<span style='color:#666'>%2:%3</span></div>")
               .arg(html_escape(f.value("function").toString("?")),
                    html_escape(f.value("file").toString()))
               .arg(f.value("line").toInt());
  }
  return out;
}

}  // namespace

BreaksView::BreaksView(QWidget* parent)
    : RunView(parent),
      model_(new BreaksModel(this)),
      proxy_(new BreaksFilterProxy(this)),
      table_(new QTableView),
      type_filter_(new QComboBox),
      module_filter_(new QLineEdit),
      count_label_(new QLabel),
      details_(new QTextBrowser),
      source_(new SourceView) {
  proxy_->setSourceModel(model_);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(BreaksModel::Count, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);

  module_filter_->setPlaceholderText("Filter by module path or file…");
  module_filter_->setClearButtonEnabled(true);
  auto* filters = new QHBoxLayout;
  filters->addWidget(new QLabel("Type:"));
  filters->addWidget(type_filter_);
  filters->addWidget(module_filter_, 1);
  filters->addWidget(count_label_);

  details_->setOpenLinks(false);
  auto* right = new QSplitter(Qt::Vertical);
  right->addWidget(details_);
  right->addWidget(source_);
  right->setStretchFactor(0, 1);
  right->setStretchFactor(1, 2);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(table_);
  split->addWidget(right);
  split->setStretchFactor(0, 11);
  split->setStretchFactor(1, 9);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(filters);
  layout->addWidget(split, 1);

  connect(type_filter_, &QComboBox::currentIndexChanged, this, [this](int index) {
    proxy_->setTypeFilter(index <= 0 ? QString() : type_filter_->itemText(index));
    updateCountLabel();
  });
  connect(module_filter_, &QLineEdit::textChanged, this, [this](const QString& text) {
    proxy_->setModuleFilter(text);
    updateCountLabel();
  });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { showSite(current); });
}

void BreaksView::setRun(const RunDataPtr& run) {
  // Keep the selected site across live refreshes.
  QString selected_key;
  const QModelIndex current = table_->currentIndex();
  if (current.isValid()) {
    const analysis::BreakSite& s = model_->site(proxy_->mapToSource(current).row());
    selected_key = q(s.file + ":" + std::to_string(s.line) + ":" + s.type + ":" + s.op);
  }
  run_ = run;
  model_->setSites(run ? run->break_sites : std::vector<analysis::BreakSite>{});
  const QString type = type_filter_->currentIndex() > 0 ? type_filter_->currentText() : QString();
  type_filter_->blockSignals(true);
  type_filter_->clear();
  type_filter_->addItem("All types");
  type_filter_->addItems(model_->types());
  type_filter_->setCurrentIndex(std::max(0, type_filter_->findText(type)));
  type_filter_->blockSignals(false);
  proxy_->setTypeFilter(type_filter_->currentIndex() > 0 ? type_filter_->currentText() : QString());
  table_->resizeColumnsToContents();
  updateCountLabel();

  int row_to_select = proxy_->rowCount() > 0 ? 0 : -1;
  for (int r = 0; r < proxy_->rowCount() && !selected_key.isEmpty(); ++r) {
    const analysis::BreakSite& s = model_->site(proxy_->mapToSource(proxy_->index(r, 0)).row());
    if (q(s.file + ":" + std::to_string(s.line) + ":" + s.type + ":" + s.op) == selected_key) row_to_select = r;
  }
  if (row_to_select >= 0) {
    table_->setCurrentIndex(proxy_->index(row_to_select, 0));
  } else {
    details_->setHtml(model_->rowCount() == 0
                          ? "<h3>No graph breaks</h3><p>Every frame of this run compiled into "
                            "whole graphs.</p>"
                          : "<p>No break site matches the filter.</p>");
    source_->clearSource("");
  }
}

void BreaksView::updateCountLabel() {
  int64_t breaks = 0;
  for (int r = 0; r < proxy_->rowCount(); ++r) {
    breaks += model_->site(proxy_->mapToSource(proxy_->index(r, 0)).row()).count;
  }
  count_label_->setText(QString("%1 site(s), %2 break(s)").arg(proxy_->rowCount()).arg(breaks));
}

void BreaksView::showSite(const QModelIndex& proxy_index) {
  if (!proxy_index.isValid() || !run_) return;
  const analysis::BreakSite& s = model_->site(proxy_->mapToSource(proxy_index).row());
  const QString where = s.file.empty() ? QString("unknown location")
                                       : QString("%1:%2").arg(q(s.file)).arg(s.line);
  details_->setHtml(
      QString("<h3 style='margin-bottom:2px'>%1 <span style='color:#666;font-weight:normal'>%2"
              "</span></h3>"
              "<p style='margin-top:0'><b>%3</b> in <code>%4</code> at <code>%5</code>, "
              "hit %6 time(s)</p>"
              "<p><b>Why:</b> %7</p>"
              "<table width='100%' cellpadding='6' style='background:#e8f4ea'><tr><td>"
              "<b>How to fix:</b> %8</td></tr></table>"
              "<p><b>Stack</b></p>%9")
          .arg(html_escape(q(s.type)), html_escape(q(s.break_id)), html_escape(q(s.op)),
               html_escape(s.module_path.empty() ? QString("(root module)") : q(s.module_path)),
               html_escape(where))
          .arg(s.count)
          .arg(html_escape(q(s.reason)),
               html_escape(s.hint.empty() ? QString("no hint recorded") : q(s.hint)),
               stack_html(s.stack_json)));

  show_source(source_, *run_, s.file, s.line, QString());
}

}  // namespace tcprof::gui
