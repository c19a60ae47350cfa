// Files that are not tcprof databases: a clear message in the window (no crash, no dialog when
// not interactive), and `--screenshot` exits 2 with exactly one line on stderr.
#include <QProcess>
#include <QtTest>

#include "gui/main_window.h"
#include "tests/gui/test_util.h"

using namespace tcprof::gui;
using namespace tcprof::gui_test;

class BadFileTest : public QObject {
  Q_OBJECT
 private:
  QString messageFor(const QString& path) {
    MainWindow window(false);
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openFiles({path});
    window.waitUntilIdle(10000);
    if (failed.count() != 1) return "(no failure reported)";
    if (window.currentRun()) return "(a run was shown)";
    return failed.at(0).at(1).toString();
  }

  QString write(const QString& name, const QByteArray& bytes) {
    QFile f(dir_.filePath(name));
    f.open(QIODevice::WriteOnly);
    f.write(bytes);
    return f.fileName();
  }

  QString sqliteWithSchema(const QString& name, const QString& version) {
    // A real tcprof file with its schema version bumped, as a future tcprof would write it.
    const QString path = make_demo_db(dir_, name);
    QProcess sqlite;
    sqlite.start("sqlite3", {path, QString("UPDATE meta SET value='%1' WHERE key='schema_version'").arg(version)});
    if (!sqlite.waitForFinished() || sqlite.exitCode() != 0) return {};
    return path;
  }

 private slots:
  void notSqlite() {
    const QString msg = messageFor(write("notes.db", "these are not the tables you are looking for\n"));
    QVERIFY2(msg.contains("not a tcprof database"), qPrintable(msg));
    QVERIFY(msg.contains("notes.db"));
  }

  void missingFile() {
    const QString msg = messageFor(dir_.filePath("nope.db"));
    QVERIFY2(msg.contains("does not exist"), qPrintable(msg));
  }

  void newerSchema() {
    const QString path = sqliteWithSchema("future.db", "999");
    if (path.isEmpty()) QSKIP("sqlite3 command-line tool not available");
    const QString msg = messageFor(path);
    QVERIFY2(msg.contains("newer"), qPrintable(msg));
  }

  void goodFileStillOpensAfterABadOne() {
    MainWindow window(false);
    window.openFiles({write("junk.db", QByteArray(4096, 'x')), make_demo_db(dir_, "good.db")});
    QVERIFY(window.waitUntilIdle(10000));
    QVERIFY(window.currentRun());
    QCOMPARE(window.runList()->files().size(), 1);
  }

  void screenshotExitsTwoWithOneLine() {
    QProcess gui;
    gui.start(TCPROF_GUI_BIN, {"--screenshot", dir_.filePath("out.png"), write("bad.db", "garbage")});
    QVERIFY(gui.waitForFinished(30000));
    QCOMPARE(gui.exitCode(), 2);
    const QStringList lines = QString::fromLocal8Bit(gui.readAllStandardError()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 1);
    QVERIFY2(lines[0].startsWith("tcprof-gui: ") && lines[0].contains("bad.db"), qPrintable(lines[0]));
    QVERIFY(!QFile::exists(dir_.filePath("out.png")));

    gui.start(TCPROF_GUI_BIN, {"--screenshot", dir_.filePath("ok.png"), "--view", "kernels", make_demo_db(dir_, "ok.db")});
    QVERIFY(gui.waitForFinished(30000));
    QCOMPARE(gui.exitCode(), 0);
    QVERIFY(QFile::exists(dir_.filePath("ok.png")));
  }

  // On a server without a display QApplication aborts ("could not connect to display"): --help
  // and --version must answer before it starts.
  void helpAndVersionNeedNoDisplay() {
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    env.insert("QT_QPA_PLATFORM", "xcb");  // a platform that needs a display, as a desktop build picks
    gui.setProcessEnvironment(env);
    gui.start(TCPROF_GUI_BIN, {"--help"});
    QVERIFY(gui.waitForFinished(30000));
    QCOMPARE(gui.exitStatus(), QProcess::NormalExit);
    QCOMPARE(gui.exitCode(), 0);
    const QString help = QString::fromLocal8Bit(gui.readAllStandardOutput());
    QVERIFY2(help.contains("--screenshot") && help.contains("--view"), qPrintable(help));

    gui.start(TCPROF_GUI_BIN, {"--version"});
    QVERIFY(gui.waitForFinished(30000));
    QCOMPARE(gui.exitCode(), 0);
    QVERIFY(QString::fromLocal8Bit(gui.readAllStandardOutput()).startsWith("tcprof-gui "));
  }

 private:
  QTemporaryDir dir_;
};

QTEST_MAIN(BadFileTest)
#include "bad_file_test.moc"
