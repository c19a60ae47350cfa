// tcprof-gui: desktop inspector for tcprof run databases. Reads through core/ only (never
// LibTorch), so it opens files recorded on other machines.
#include <QApplication>
#include <QCommandLineParser>
#include <QLabel>
#include <QMainWindow>
#include <QMessageBox>
#include <QVBoxLayout>

#include "core/error.h"
#include "core/run_reader.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("tcprof-gui");
  QCommandLineParser parser;
  parser.setApplicationDescription("Inspect tcprof run databases");
  parser.addHelpOption();
  QCommandLineOption screenshot("screenshot", "Render the window offscreen to PNG and exit", "OUT.png");
  parser.addOption(screenshot);
  parser.addPositionalArgument("db", "tcprof databases to open", "[DB...]");
  parser.process(app);

  QMainWindow window;
  window.setWindowTitle("tcprof");
  auto* label = new QLabel;
  label->setMargin(16);
  QString text = "Open a tcprof run database.";
  const QStringList files = parser.positionalArguments();
  for (const QString& file : files) {
    try {
      tcprof::RunReader reader(file.toStdString());
      text = QString("%1: %2 run(s)").arg(file).arg(reader.runs().size());
    } catch (const tcprof::Error& e) {
      if (parser.isSet(screenshot)) {
        fprintf(stderr, "tcprof-gui: %s\n", e.what());
        return 2;
      }
      QMessageBox::critical(nullptr, "tcprof", QString::fromStdString(e.what()));
    }
  }
  label->setText(text);
  window.setCentralWidget(label);
  window.resize(900, 600);
  if (parser.isSet(screenshot)) {
    window.show();
    return window.grab().save(parser.value(screenshot)) ? 0 : 2;
  }
  window.show();
  return app.exec();
}
