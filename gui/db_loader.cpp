#include "gui/db_loader.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include "core/error.h"

namespace tcprof::gui {
namespace {

struct Result {
  QString error;
  std::vector<RunRow> runs;
  RunDataPtr data;
};

QString message_of(const std::exception& e) { return QString::fromStdString(e.what()); }

}  // namespace

DbLoader::DbLoader(QObject* parent) : QObject(parent) {}

DbLoader::~DbLoader() {
  // Jobs refer to this object (progress); let them end before it goes away.
  for (auto* watcher : findChildren<QFutureWatcherBase*>()) watcher->waitForFinished();
}

void DbLoader::finish() {
  if (--pending_ == 0) emit busyChanged(false);
}

int DbLoader::openFile(const QString& path) {
  const int request = next_request_++;
  if (pending_++ == 0) emit busyChanged(true);
  auto* watcher = new QFutureWatcher<Result>(this);
  connect(watcher, &QFutureWatcher<Result>::finished, this, [this, watcher, request, path] {
    Result r = watcher->result();
    watcher->deleteLater();
    finish();
    if (r.error.isEmpty()) emit fileOpened(request, path, r.runs);
    else emit failed(request, path, r.error);
  });
  watcher->setFuture(QtConcurrent::run([path] {
    Result r;
    try {
      RunReader reader(path.toStdString());
      r.runs = reader.runs();
      if (r.runs.empty()) r.error = QString("'%1' holds no tcprof runs").arg(path);
    } catch (const std::exception& e) {
      r.error = message_of(e);
    }
    return r;
  }));
  return request;
}

int DbLoader::loadRun(const QString& path, Id run_id) {
  const int request = next_request_++;
  if (pending_++ == 0) emit busyChanged(true);
  auto* watcher = new QFutureWatcher<Result>(this);
  connect(watcher, &QFutureWatcher<Result>::finished, this, [this, watcher, request, path] {
    Result r = watcher->result();
    watcher->deleteLater();
    finish();
    if (r.error.isEmpty()) emit runLoaded(request, r.data);
    else emit failed(request, path, r.error);
  });
  // Progress goes through a queued call so the signal is emitted on the UI thread. `this` stays
  // valid: the destructor waits for every job, and Qt drops calls posted to a deleted object.
  watcher->setFuture(QtConcurrent::run([this, path, run_id, request] {
    Result r;
    try {
      r.data = load_run_data(path, run_id, [&](const QString& text, double fraction) {
        QMetaObject::invokeMethod(
            this, [this, request, text, fraction] { emit progress(request, text, fraction); },
            Qt::QueuedConnection);
      });
    } catch (const std::exception& e) {
      r.error = message_of(e);
    }
    return r;
  }));
  return request;
}

}  // namespace tcprof::gui
