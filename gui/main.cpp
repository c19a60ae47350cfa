// tcprof-gui: desktop inspector for tcprof run databases. Reads through core/ only (never
// LibTorch), so it opens files recorded on other machines.
#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>
#include <cstring>

#include "gui/main_window.h"
#include "gui/screenshot.h"

namespace {
// Headless runs promise one stderr line on failure: Qt's own notices about the offscreen
// platform (size hints, XDG_RUNTIME_DIR) are not for the user there.
void quiet_message_handler(QtMsgType type, const QMessageLogContext&, const QString& message) {
  if (type == QtCriticalMsg || type == QtFatalMsg) std::fprintf(stderr, "tcprof-gui: %s\n", qPrintable(message));
}
}  // namespace

int main(int argc, char** argv) {
  // Screenshots render without a display: pick the offscreen platform before Qt starts, unless
  // the caller chose one.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--screenshot") != 0) continue;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler(quiet_message_handler);
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName("tcprof-gui");
  QApplication::setOrganizationName("tcprof");
  QCommandLineParser parser;
  parser.setApplicationDescription("Inspect tcprof run databases");
  parser.addHelpOption();
  QCommandLineOption screenshot("screenshot", "Render the window offscreen to PNG and exit", "OUT.png");
  QCommandLineOption view("view", "View for --screenshot: overview, breaks, recompiles, kernels, graphs, training, compare",
                          "NAME", "overview");
  QCommandLineOption size("size", "Window size for --screenshot", "WxH", "1400x900");
  QCommandLineOption range("time-range", "Kernels view for --screenshot: zoom to and select START..END (ms since the run started)",
                           "START..END");
  parser.addOption(screenshot);
  parser.addOption(view);
  parser.addOption(size);
  parser.addOption(range);
  parser.addPositionalArgument("db", "tcprof databases to open", "[DB...]");
  parser.process(app);

  if (parser.isSet(screenshot)) {
    tcprof::gui::ScreenshotOptions options;
    options.view = parser.value(view);
    const QStringList wh = parser.value(size).split('x');
    const QSize window_size(wh.value(0).toInt(), wh.value(1).toInt());
    if (window_size.isValid() && !window_size.isEmpty()) options.size = window_size;
    if (parser.isSet(range)) {
      const QStringList ends = parser.value(range).split("..");
      bool ok_start = false, ok_end = false;
      options.range_start_ms = ends.value(0).toDouble(&ok_start);
      options.range_end_ms = ends.value(1).toDouble(&ok_end);
      if (ends.size() != 2 || !ok_start || !ok_end || options.range_end_ms <= options.range_start_ms) {
        std::fprintf(stderr, "tcprof-gui: --time-range wants START..END in ms, e.g. 250..262\n");
        return 2;
      }
    }
    return tcprof::gui::take_screenshot(parser.positionalArguments(), parser.value(screenshot), options);
  }
  tcprof::gui::MainWindow window;
  window.show();
  window.openFiles(parser.positionalArguments());
  return app.exec();
}
