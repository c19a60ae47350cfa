// The nsys-style kernel summary (cuda_gpu_kern_sum columns: Time %, Total, Instances, Avg, Med,
// Min, Max, StdDev, Name) for the whole run or a selected time range.
#pragma once
#include <QAbstractTableModel>
#include <vector>

#include "gui/run_data.h"

namespace tcprof::gui {

class KernelTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { TimePercent, Total, Instances, Avg, Med, Min, Max, StdDev, Kind, Name, ColumnCount };
  static constexpr int SortRole = Qt::UserRole;
  static constexpr int NameIndexRole = Qt::UserRole + 1;  // index into KernelData::names

  explicit KernelTableModel(QObject* parent = nullptr);
  void setRows(const RunDataPtr& run, std::vector<analysis::KernelStats> rows);
  const analysis::KernelStats& summaryRow(int row) const { return rows_[static_cast<size_t>(row)]; }
  int rowOfName(uint32_t name) const;  // -1 when not in the table

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  RunDataPtr run_;
  std::vector<analysis::KernelStats> rows_;
  std::vector<int> name_index_;  // per row, its name's index in KernelData::names (-1: none)
};

}  // namespace tcprof::gui
