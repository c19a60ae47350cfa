#include "gui/kernel_table_model.h"

#include "gui/format.h"

namespace tcprof::gui {

KernelTableModel::KernelTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void KernelTableModel::setRows(const RunDataPtr& run, std::vector<analysis::KernelStats> rows) {
  beginResetModel();
  run_ = run;
  rows_ = std::move(rows);
  name_index_.clear();
  for (const auto& r : rows_) {
    name_index_.push_back(run_->kernels.name_index(QString::fromStdString(r.name), QString::fromStdString(r.kind)));
  }
  endResetModel();
}

int KernelTableModel::rowOfName(uint32_t name) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (name_index_[i] == static_cast<int>(name)) return static_cast<int>(i);
  }
  return -1;
}

int KernelTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int KernelTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const analysis::KernelStats& r = rows_[static_cast<size_t>(index.row())];
  const QString name = QString::fromStdString(r.name);
  if (role == NameIndexRole) return name_index_[static_cast<size_t>(index.row())];
  if (role == Qt::TextAlignmentRole) {
    return index.column() < Kind ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
  }
  if (role == Qt::DecorationRole && index.column() == Name) return color_for_name(name);
  if (role == Qt::ToolTipRole && index.column() == Name) return name;
  const bool sort = role == SortRole;
  if (role != Qt::DisplayRole && !sort) return {};
  switch (index.column()) {
    case TimePercent: return sort ? QVariant(r.time_percent) : QVariant(QString::number(r.time_percent, 'f', 1));
    case Total: return sort ? QVariant(static_cast<qlonglong>(r.total_ns)) : QVariant(format_ns(static_cast<double>(r.total_ns)));
    case Instances: return sort ? QVariant(static_cast<qlonglong>(r.instances)) : QVariant(format_count(r.instances));
    case Avg: return sort ? QVariant(r.avg_ns) : QVariant(format_ns(r.avg_ns));
    case Med: return sort ? QVariant(r.median_ns) : QVariant(format_ns(r.median_ns));
    case Min: return sort ? QVariant(static_cast<qlonglong>(r.min_ns)) : QVariant(format_ns(static_cast<double>(r.min_ns)));
    case Max: return sort ? QVariant(static_cast<qlonglong>(r.max_ns)) : QVariant(format_ns(static_cast<double>(r.max_ns)));
    case StdDev: return sort ? QVariant(r.stddev_ns) : QVariant(format_ns(r.stddev_ns));
    case Kind: return QString::fromStdString(r.kind);
    case Name: return name;
    default: return {};
  }
}

QVariant KernelTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  static const char* names[] = {"Time (%)", "Total Time", "Instances", "Avg", "Med",
                                "Min",      "Max",        "StdDev",    "Kind", "Name"};
  return section >= 0 && section < ColumnCount ? QVariant(names[section]) : QVariant();
}

}  // namespace tcprof::gui
