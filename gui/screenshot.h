// Headless rendering: `tcprof-gui --screenshot OUT.png [--view NAME] DB...` opens the files,
// waits for them to load, shows one view and writes the window as a PNG. Used for docs, bug
// reports and tests.
#pragma once
#include <QSize>
#include <QString>
#include <QStringList>

namespace tcprof::gui {

struct ScreenshotOptions {
  QString view = "overview";
  QSize size{1400, 900};
  // Kernels view: zoom the timeline to this range and select it (ms since the run started);
  // ignored when end <= start.
  double range_start_ms = 0, range_end_ms = 0;
};

// Returns the process exit code: 0 written, 2 bad input (one line on stderr names it).
int take_screenshot(const QStringList& databases, const QString& out_png, const ScreenshotOptions& options);

}  // namespace tcprof::gui
