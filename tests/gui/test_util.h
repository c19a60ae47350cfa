// Shared helpers for the GUI suites: demo databases in a temporary directory.
#pragma once
#include <QTemporaryDir>
#include <QtTest>

#include "gui/run_data.h"
#include "tests/gui/demo_run.h"

namespace tcprof::gui_test {

inline QString make_demo_db(const QTemporaryDir& dir, const QString& name, DemoOptions options = {}) {
  const QString path = dir.filePath(name);
  write_demo_run(path.toStdString(), options);
  return path;
}

// The first (only) run of a demo database, loaded synchronously.
inline gui::RunDataPtr load_demo(const QString& path) { return gui::load_run_data(path, 1); }

}  // namespace tcprof::gui_test
