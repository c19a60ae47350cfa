// Graph-break sites of a run (already de-duplicated by the reader) as a sortable table, and the
// proxy that filters them by break type and module path.
#pragma once
#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <vector>

#include "analysis/break_sites.h"

namespace tcprof::gui {

class BreaksModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Count, Type, BreakId, Op, Module, Location, Reason, ColumnCount };
  static constexpr int SortRole = Qt::UserRole;
  static constexpr int TypeRole = Qt::UserRole + 1;
  static constexpr int ModuleRole = Qt::UserRole + 2;

  explicit BreaksModel(QObject* parent = nullptr);
  void setSites(std::vector<analysis::BreakSite> sites);
  const analysis::BreakSite& site(int row) const { return sites_[static_cast<size_t>(row)]; }
  QStringList types() const;  // distinct break types, sorted

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<analysis::BreakSite> sites_;
};

class BreaksFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit BreaksFilterProxy(QObject* parent = nullptr);
  void setTypeFilter(const QString& type);      // empty = all types
  void setModuleFilter(const QString& module);  // substring of the module path or file
 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

 private:
  QString type_, module_;
};

}  // namespace tcprof::gui
