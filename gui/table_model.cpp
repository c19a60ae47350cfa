#include "gui/table_model.h"

#include "gui/format.h"

namespace tcprof::gui {

TableModel::TableModel(QStringList headers, QObject* parent)
    : QAbstractTableModel(parent), headers_(std::move(headers)) {}

void TableModel::setRows(QVector<Row> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  for (Row& r : rows_) r.resize(headers_.size());
  endResetModel();
}

int TableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int TableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(headers_.size());
}

QVariant TableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const TableCell& c = rows_[index.row()][index.column()];
  switch (role) {
    case Qt::DisplayRole: return c.text;
    case Qt::UserRole: return c.sort.isValid() ? c.sort : QVariant(c.text);
    case Qt::ToolTipRole: return c.tooltip.isEmpty() ? QVariant() : QVariant(c.tooltip);
    case Qt::ForegroundRole: return c.foreground.isValid() ? QVariant(c.foreground) : QVariant();
    case Qt::TextAlignmentRole:
      return c.right_align ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    default: return {};
  }
}

QVariant TableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Horizontal && role == Qt::DisplayRole && section >= 0 &&
      section < headers_.size()) {
    return headers_[section];
  }
  return QAbstractTableModel::headerData(section, orientation, role);
}

TableCell TableModel::text(const QString& t, const QString& tooltip) {
  TableCell c;
  c.text = t;
  c.tooltip = tooltip;
  return c;
}

TableCell TableModel::number(double value, const QString& shown) {
  TableCell c;
  c.text = shown;
  c.sort = value;
  c.right_align = true;
  return c;
}

TableCell TableModel::duration(double ns) { return number(ns, format_ns(ns)); }

TableCell TableModel::count(int64_t n) { return number(static_cast<double>(n), format_count(n)); }

}  // namespace tcprof::gui
