#include "gui/db_loader.h"

#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include "core/error.h"
#include "importers/trace_import.h"

namespace tcprof::gui {
namespace {

struct Result {
  QString error;
  QString db;  // the database listed: the path itself, or the one a TORCH_TRACE was imported into
  QStringList warnings;
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

bool DbLoader::isTorchTrace(const QString& path) {
  return import::looks_like_torch_trace(path.toStdString());
}

QString DbLoader::importTarget(const QString& trace, int request) {
  if (!imports_) imports_ = std::make_unique<QTemporaryDir>(QDir::tempPath() + "/tcprof-gui-import-XXXXXX");
  if (!imports_->isValid()) return {};
  return imports_->filePath(QString("%1-%2.db").arg(QFileInfo(trace).fileName()).arg(request));
}

int DbLoader::openFile(const QString& path) {
  const int request = next_request_++;
  if (pending_++ == 0) emit busyChanged(true);
  const bool trace = isTorchTrace(path);
  const QString db = trace ? importTarget(path, request) : path;
  auto* watcher = new QFutureWatcher<Result>(this);
  connect(watcher, &QFutureWatcher<Result>::finished, this, [this, watcher, request, path, trace] {
    Result r = watcher->result();
    watcher->deleteLater();
    finish();
    if (!r.error.isEmpty()) {
      emit failed(request, path, r.error);
      return;
    }
    if (trace) emit imported(request, path, r.db, r.warnings);
    emit fileOpened(request, r.db, r.runs);
  });
  watcher->setFuture(QtConcurrent::run([this, path, db, trace, request] {
    Result r;
    r.db = db;
    try {
      if (trace) {
        if (db.isEmpty()) throw Error(ErrorKind::Input, "cannot make a temporary folder to import into: check TMPDIR");
        // The same importer as `tcprof import`, into a database that lives as long as the window.
        const import::ImportRequest req{{path.toStdString()}, {}, db.toStdString()};
        auto report = [this, request, path](double fraction) {
          const QString text = QString("Importing %1").arg(QFileInfo(path).fileName());
          QMetaObject::invokeMethod(
              this, [this, request, text, fraction] { emit progress(request, text, fraction); },
              Qt::QueuedConnection);
        };
        import::ImportResult imported = import::import_traces(req, report);
        for (const auto& w : imported.warnings) r.warnings << QString::fromStdString(w);
        if (imported.runs.empty()) {
          r.error = imported.errors.empty() ? QString("'%1' holds no torch.compile records").arg(path)
                                            : QString::fromStdString(imported.errors.front());
          return r;
        }
      }
      RunReader reader(db.toStdString());
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
