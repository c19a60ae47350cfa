#include "gui/breaks_model.h"

#include <QFileInfo>
#include <set>

namespace tcprof::gui {

BreaksModel::BreaksModel(QObject* parent) : QAbstractTableModel(parent) {}

void BreaksModel::setSites(std::vector<analysis::BreakSite> sites) {
  beginResetModel();
  sites_ = std::move(sites);
  endResetModel();
}

QStringList BreaksModel::types() const {
  std::set<QString> types;
  for (const auto& s : sites_) types.insert(QString::fromStdString(s.type));
  return QStringList(types.begin(), types.end());
}

int BreaksModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(sites_.size());
}

int BreaksModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant BreaksModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const analysis::BreakSite& s = sites_[static_cast<size_t>(index.row())];
  auto q = [](const std::string& t) { return QString::fromStdString(t); };
  if (role == TypeRole) return q(s.type);
  if (role == ModuleRole) return q(s.module_path) + ' ' + q(s.file);
  if (role == Qt::TextAlignmentRole && index.column() == Count) {
    return int(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ToolTipRole) {
    return QString("%1:%2\n%3\nHint: %4").arg(q(s.file)).arg(s.line).arg(q(s.reason), q(s.hint));
  }
  if (role != Qt::DisplayRole && role != SortRole) return {};
  switch (index.column()) {
    case Count: return role == SortRole ? QVariant(static_cast<qlonglong>(s.count)) : QVariant(QString::number(s.count));
    case Type: return q(s.type);
    case BreakId: return q(s.break_id);
    case Op: return q(s.op);
    case Module: return s.module_path.empty() ? QString("(root)") : q(s.module_path);
    case Location:
      if (role == SortRole) return QString("%1:%2").arg(q(s.file)).arg(s.line, 8, 10, QChar('0'));
      // The file name is what users scan for; the full path is in the tooltip and details.
      return s.file.empty() ? QString("?") : QString("%1:%2").arg(QFileInfo(q(s.file)).fileName()).arg(s.line);
    case Reason: return q(s.reason);
    default: return {};
  }
}

QVariant BreaksModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  static const char* names[] = {"Count", "Type", "Id", "Op", "Module", "Location", "Reason"};
  return section >= 0 && section < ColumnCount ? QVariant(names[section]) : QVariant();
}

BreaksFilterProxy::BreaksFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(BreaksModel::SortRole);
}

void BreaksFilterProxy::setTypeFilter(const QString& type) {
  type_ = type;
  invalidateFilter();
}

void BreaksFilterProxy::setModuleFilter(const QString& module) {
  module_ = module;
  invalidateFilter();
}

bool BreaksFilterProxy::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const {
  const QModelIndex index = sourceModel()->index(source_row, 0, source_parent);
  if (!type_.isEmpty() && index.data(BreaksModel::TypeRole).toString() != type_) return false;
  if (!module_.isEmpty() &&
      !index.data(BreaksModel::ModuleRole).toString().contains(module_, Qt::CaseInsensitive)) {
    return false;
  }
  return true;
}

}  // namespace tcprof::gui
