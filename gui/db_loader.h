// Reads databases off the UI thread (QtConcurrent) so the window never freezes while a large
// run loads or a live database refreshes. Each request gets an id; results come back as signals
// on the UI thread carrying that id, so callers can drop answers they no longer want.
#pragma once
#include <QObject>
#include <QString>
#include <QTemporaryDir>
#include <memory>
#include <vector>

#include "gui/run_data.h"

namespace tcprof::gui {

class DbLoader : public QObject {
  Q_OBJECT
 public:
  explicit DbLoader(QObject* parent = nullptr);
  ~DbLoader() override;

  // Lists the runs in `path`: emits fileOpened or failed. A TORCH_TRACE log or folder of logs
  // (PyTorch's torch.compile records) is first imported into a temporary database, with
  // progress, and announced by `imported`; fileOpened then names that database.
  int openFile(const QString& path);
  // True for a path openFile imports rather than reads (a folder, or a glog + JSON log).
  static bool isTorchTrace(const QString& path);
  // Reads one whole run: emits progress, then runLoaded or failed.
  int loadRun(const QString& path, Id run_id);
  int pending() const { return pending_; }

 signals:
  void fileOpened(int request, const QString& path, const std::vector<tcprof::RunRow>& runs);
  void imported(int request, const QString& trace, const QString& db, const QStringList& warnings);
  void runLoaded(int request, tcprof::gui::RunDataPtr data);
  void failed(int request, const QString& path, const QString& message);
  void progress(int request, const QString& text, double fraction);
  void busyChanged(bool busy);

 private:
  void finish();
  QString importTarget(const QString& trace, int request);
  std::unique_ptr<QTemporaryDir> imports_;  // made at the first import, removed with the loader
  int next_request_ = 1;
  int pending_ = 0;
};

}  // namespace tcprof::gui
