// Reads databases off the UI thread (QtConcurrent) so the window never freezes while a large
// run loads or a live database refreshes. Each request gets an id; results come back as signals
// on the UI thread carrying that id, so callers can drop answers they no longer want.
#pragma once
#include <QObject>
#include <QString>
#include <vector>

#include "gui/run_data.h"

namespace tcprof::gui {

class DbLoader : public QObject {
  Q_OBJECT
 public:
  explicit DbLoader(QObject* parent = nullptr);
  ~DbLoader() override;

  // Lists the runs in `path`: emits fileOpened or failed.
  int openFile(const QString& path);
  // Reads one whole run: emits progress, then runLoaded or failed.
  int loadRun(const QString& path, Id run_id);
  int pending() const { return pending_; }

 signals:
  void fileOpened(int request, const QString& path, const std::vector<tcprof::RunRow>& runs);
  void runLoaded(int request, tcprof::gui::RunDataPtr data);
  void failed(int request, const QString& path, const QString& message);
  void progress(int request, const QString& text, double fraction);
  void busyChanged(bool busy);

 private:
  void finish();
  int next_request_ = 1;
  int pending_ = 0;
};

}  // namespace tcprof::gui
