#include "gui/screenshot.h"

#include <QApplication>
#include <QTableView>
#include <cstdio>

#include "gui/compare_view.h"
#include "gui/kernels_view.h"
#include "gui/main_window.h"

namespace tcprof::gui {
namespace {
int fail(const QString& message) {
  std::fprintf(stderr, "tcprof-gui: %s\n", message.toLocal8Bit().constData());
  return 2;
}
}  // namespace

int take_screenshot(const QStringList& databases, const QString& out_png, const ScreenshotOptions& options) {
  const QString& view = options.view;
  if (!MainWindow::viewNames().contains(view)) {
    return fail(QString("unknown view '%1' (one of: %2)").arg(view, MainWindow::viewNames().join(", ")));
  }
  if (databases.isEmpty()) return fail("--screenshot needs at least one database");
  MainWindow window(/*interactive=*/false);
  QString error;
  QObject::connect(&window, &MainWindow::loadFailed, [&](const QString&, const QString& message) {
    if (error.isEmpty()) error = message;
  });
  window.resize(options.size);
  window.showView(view);
  window.show();
  window.openFiles(databases);
  if (!window.waitUntilIdle(120000)) return fail("timed out loading the database");
  if (!error.isEmpty()) return fail(error);
  if (!window.currentRun()) return fail("no run to show");
  if (view == "compare") {
    // Two files: first run of each. One file with several runs: its first two.
    CompareView* compare = window.compare();
    const int b = compare->runB()->count() > 1 ? 1 : 0;
    compare->comparePair(0, b);
    window.waitUntilIdle(60000);
  }
  if (view == "kernels") {
    // Show the selection sync: the most expensive kernel selected in table and timeline.
    KernelsView* kernels = window.kernels();
    QTableView* table = kernels->table();
    if (options.range_end_ms > options.range_start_ms) {
      const double origin = static_cast<double>(window.currentRun()->time_range.start_ns);
      const double start = origin + options.range_start_ms * 1e6, end = origin + options.range_end_ms * 1e6;
      const double pad = (end - start) * 0.05;
      kernels->timeline()->setView(start - pad, end + pad);
      kernels->timeline()->setSelectedRange({static_cast<int64_t>(start), static_cast<int64_t>(end)});
    }
    if (table->model()->rowCount() > 0) table->setCurrentIndex(table->model()->index(0, 0));
  }
  QApplication::processEvents();
  if (!window.grab().save(out_png)) return fail(QString("cannot write '%1'").arg(out_png));
  return 0;
}

}  // namespace tcprof::gui
