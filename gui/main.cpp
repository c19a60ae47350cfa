// tcprof-gui: desktop inspector for tcprof run databases. Reads through core/ only (never
// LibTorch), so it opens files recorded on other machines.
#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>
#include <cstring>

#include "gui/main_window.h"
#include "gui/screenshot.h"

#ifndef TCPROF_VERSION
#define TCPROF_VERSION "0.0.0"
#endif

namespace {
// Headless runs promise one stderr line on failure: Qt's own notices about the offscreen
// platform (size hints, XDG_RUNTIME_DIR) are not for the user there.
void quiet_message_handler(QtMsgType type, const QMessageLogContext&, const QString& message) {
  if (type == QtCriticalMsg || type == QtFatalMsg) std::fprintf(stderr, "tcprof-gui: %s\n", qPrintable(message));
}

// The command line, described once for both the help-only and the windowed start.
struct Options {
  QCommandLineOption screenshot{"screenshot", "Render the window offscreen to PNG and exit", "OUT.png"};
  QCommandLineOption view{"view", "View for --screenshot: " + tcprof::gui::MainWindow::viewNames().join(", "),
                          "NAME", "overview"};
  QCommandLineOption size{"size", "Window size for --screenshot", "WxH", "1400x900"};
  QCommandLineOption range{"time-range", "Kernels view for --screenshot: zoom to and select START..END (ms since the run started)",
                           "START..END"};

  void add_to(QCommandLineParser& parser) const {
    parser.setApplicationDescription("Inspect tcprof run databases");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption(screenshot);
    parser.addOption(view);
    parser.addOption(size);
    parser.addOption(range);
    parser.addPositionalArgument("path", "tcprof databases, or TORCH_TRACE logs or folders to import and open", "[DB|TRACE...]");
  }
};

void name_application() {
  QCoreApplication::setApplicationName("tcprof-gui");
  QCoreApplication::setOrganizationName("tcprof");
  QCoreApplication::setApplicationVersion(TCPROF_VERSION);
}

// --help and --version print and exit before any window system is needed: QApplication aborts
// without a display, and `tcprof-gui --help` on a server must still answer.
bool wants_only_text(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h") || !std::strcmp(a, "--help-all") ||
        !std::strcmp(a, "--version") || !std::strcmp(a, "-v")) {
      return true;
    }
  }
  return false;
}
}  // namespace

int main(int argc, char** argv) {
  const Options options;
  if (wants_only_text(argc, argv)) {
    QCoreApplication app(argc, argv);
    name_application();
    QCommandLineParser parser;
    options.add_to(parser);
    parser.process(app);  // prints and exits
    return 0;
  }
  // Screenshots render without a display: pick the offscreen platform before Qt starts, unless
  // the caller chose one.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--screenshot") != 0) continue;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler(quiet_message_handler);
  }
  QApplication app(argc, argv);
  name_application();
  QCommandLineParser parser;
  options.add_to(parser);
  parser.process(app);

  if (parser.isSet(options.screenshot)) {
    tcprof::gui::ScreenshotOptions shot;
    shot.view = parser.value(options.view);
    const QStringList wh = parser.value(options.size).split('x');
    const QSize window_size(wh.value(0).toInt(), wh.value(1).toInt());
    if (window_size.isValid() && !window_size.isEmpty()) shot.size = window_size;
    if (parser.isSet(options.range)) {
      const QStringList ends = parser.value(options.range).split("..");
      bool ok_start = false, ok_end = false;
      shot.range_start_ms = ends.value(0).toDouble(&ok_start);
      shot.range_end_ms = ends.value(1).toDouble(&ok_end);
      if (ends.size() != 2 || !ok_start || !ok_end || shot.range_end_ms <= shot.range_start_ms) {
        std::fprintf(stderr, "tcprof-gui: --time-range wants START..END in ms, e.g. 250..262\n");
        return 2;
      }
    }
    return tcprof::gui::take_screenshot(parser.positionalArguments(), parser.value(options.screenshot), shot);
  }
  tcprof::gui::MainWindow window;
  window.show();
  window.openFiles(parser.positionalArguments());
  return app.exec();
}
