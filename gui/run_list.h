// The open files and their runs, as a tree (file → runs). Several files can be open at once;
// the selected run is what every view shows.
#pragma once
#include <QTreeWidget>
#include <vector>

#include "core/run_reader.h"
#include "gui/compare_view.h"

namespace tcprof::gui {

class RunList : public QTreeWidget {
  Q_OBJECT
 public:
  explicit RunList(QWidget* parent = nullptr);

  // Adds or refreshes a file's runs; returns the item of its newest run.
  QTreeWidgetItem* setFile(const QString& path, const std::vector<RunRow>& runs);
  void removeFile(const QString& path);
  void setRunStatus(const QString& path, Id run_id, const QString& status);
  bool selectRun(const QString& path, Id run_id);
  QStringList files() const;
  QVector<RunKey> allRuns() const;
  // The selected run; run_id 0 when none.
  RunKey currentRun() const;

 signals:
  void runSelected(const QString& path, tcprof::Id run_id);

 private:
  QTreeWidgetItem* fileItem(const QString& path) const;
  static QString runText(const RunRow& run);
};

}  // namespace tcprof::gui
