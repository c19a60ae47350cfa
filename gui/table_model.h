// A read-only table of prepared cells, for the many small tables (guards, guard failures,
// recompiles, graphs, comparisons) that need nothing but display text, a sort key and a tooltip.
// Qt::UserRole returns the sort key (numbers stay numbers), so a QSortFilterProxyModel with
// sortRole = Qt::UserRole sorts durations numerically.
#pragma once
#include <QAbstractTableModel>
#include <QColor>
#include <QStringList>
#include <QVariant>
#include <QVector>

namespace tcprof::gui {

struct TableCell {
  QString text;
  QVariant sort;  // defaults to text
  QString tooltip;
  QColor foreground;  // invalid = default
  bool right_align = false;
};

class TableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using Row = QVector<TableCell>;
  explicit TableModel(QStringList headers, QObject* parent = nullptr);

  void setRows(QVector<Row> rows);
  const Row& rowAt(int row) const { return rows_[row]; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  // Helpers to build cells.
  static TableCell text(const QString& t, const QString& tooltip = {});
  static TableCell number(double value, const QString& shown);
  static TableCell duration(double ns);
  static TableCell count(int64_t n);

 private:
  QStringList headers_;
  QVector<Row> rows_;
};

}  // namespace tcprof::gui
