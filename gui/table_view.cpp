#include "gui/table_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace tcprof::gui {

QTableView* make_row_table(QAbstractItemModel* model, int stretch_column) {
  auto* t = new QTableView;
  t->setModel(model);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->verticalHeader()->hide();
  if (stretch_column < 0) {
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->horizontalHeader()->setStretchLastSection(true);
  } else {
    t->horizontalHeader()->setSectionResizeMode(stretch_column, QHeaderView::Stretch);
  }
  t->setAlternatingRowColors(true);
  t->setWordWrap(false);
  return t;
}

QWidget* titled(const QString& title, QWidget* w) {
  auto* box = new QWidget;
  auto* l = new QVBoxLayout(box);
  l->setContentsMargins(0, 0, 0, 0);
  l->addWidget(new QLabel(title));
  l->addWidget(w);
  return box;
}

}  // namespace tcprof::gui
