// Opening PyTorch's own records in the GUI: a TORCH_TRACE folder or .log.gz given to the window
// (command line, File > Open, drag and drop) is imported with the same importer as
// `tcprof import` into a temporary database, with progress, and shown like any run.
#include <QSignalSpy>
#include <QtTest>

#include "gui/breaks_view.h"
#include "gui/compile_time_view.h"
#include "gui/main_window.h"
#include "gui/recompiles_view.h"
#include "tests/gui/test_util.h"

using namespace tcprof;
using namespace tcprof::gui;

namespace {
QString fixture(const char* name) { return QString(TCPROF_TRACE_FIXTURES) + "/" + name; }
}  // namespace

class ImportTest : public QObject {
  Q_OBJECT
 private slots:
  void traceFolderOfTwoRanksOpensAsTheirRuns() {
    const QString trace = fixture("ranks_torch2.6_cpu");
    QVERIFY(DbLoader::isTorchTrace(trace));
    MainWindow window(false);
    window.show();
    QSignalSpy imported(window.loader(), &DbLoader::imported);
    window.openFiles({trace});
    QVERIFY(window.waitUntilIdle(60000));
    QCOMPARE(imported.count(), 1);
    const QString db = imported.at(0).at(2).toString();
    QVERIFY(db.endsWith(".db"));
    QVERIFY(QFileInfo::exists(db));
    // The list holds the imported database, not a placeholder for the folder.
    const QVector<RunKey> runs = window.runList()->allRuns();
    QCOMPARE(runs.size(), 2);
    for (const RunKey& k : runs) QCOMPARE(k.path, db);
    QVERIFY(window.currentRun());
    QCOMPARE(window.currentRun()->run.rank, 1);                    // the newest run: rank 1
    QCOMPARE(window.recompiles()->recompileModel()->rowCount(), 1);  // forward's 0/1
  }

  // PyTorch 2.15: six blocks compiled one by one, then reset() and the stack compiled whole. The
  // Compile time view of the whole-stack run shows its one compile by stage and the six copies of
  // one block that regional compilation would compile once, as `report` says it.
  void compileTimeViewShowsStagesAndRepeatedBlocks() {
    MainWindow window(false);
    window.show();
    window.openFiles({fixture("torch2.15_cpu/regional")});
    QVERIFY(window.waitUntilIdle(60000));
    QVERIFY(window.currentRun());
    QVERIFY(window.showView("compile"));
    CompileTimeView* view = window.compileTime();
    const analysis::CompileTimeReport& t = window.currentRun()->compile_time;
    QCOMPARE(view->compileModel()->rowCount(), 1);
    QCOMPARE(view->compileModel()->index(0, 0).data().toString(), QString("0/0"));
    // Total, then the six stages, which add up to it.
    double stages = 0;
    for (int s = 0; s < analysis::kCompileStages; ++s) stages += view->compileModel()->index(0, 3 + s).data(Qt::UserRole).toDouble();
    QCOMPARE(stages, view->compileModel()->index(0, 2).data(Qt::UserRole).toDouble());
    QCOMPARE(static_cast<int64_t>(stages), t.total_ns);
    QCOMPARE(view->compileModel()->index(0, 9).data().toString(), QString("0 hits, 1 miss"));
    QCOMPARE(view->repeatModel()->rowCount(), 1);
    const QString advice = view->repeatModel()->index(0, 0).data().toString();
    QVERIFY2(advice.startsWith("modules 0-5 are 6 copies of one 5-op block in 0/0's graph"), qPrintable(advice));
    QCOMPARE(advice.toStdString(), analysis::advice(t.blocks.at(0)));
    QVERIFY(view->summaryText().contains("in 1 compile"));
    QCOMPARE(view->chartView()->chart()->series().size(), 1);
    // The first run (blocks compiled one by one) repeats a graph instead.
    const QVector<RunKey> runs = window.runList()->allRuns();
    QCOMPARE(runs.size(), 2);
  }

  void gzippedLogReportsProgressAndShowsItsBreaks() {
    const QString trace = fixture("breaks_torch2.11_h100.log.gz");
    MainWindow window(false);
    window.show();
    QSignalSpy progress(window.loader(), &DbLoader::progress);
    window.openFiles({trace});
    QVERIFY(window.waitUntilIdle(60000));
    QVERIFY(window.currentRun());
    QCOMPARE(window.currentRun()->run.source, std::string("torch_trace"));
    // 13 break records at 4 sites (the fixture's README).
    QCOMPARE(window.currentRun()->break_sites.size(), size_t{4});
    // Progress for the import, ending at the whole file.
    double last = -1;
    bool importing = false;
    for (const auto& call : progress) {
      if (call.at(1).toString().startsWith("Importing breaks_torch2.11_h100.log.gz")) {
        importing = true;
        QVERIFY(call.at(2).toDouble() >= last);
        last = call.at(2).toDouble();
      }
    }
    QVERIFY(importing);
    QCOMPARE(last, 1.0);
  }

  void aFileThatIsNeitherFailsWithItsName() {
    QTemporaryDir dir;
    const QString junk = dir.filePath("notes.log");
    QFile f(junk);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("these are not torch.compile records\n");
    f.close();
    MainWindow window(false);
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openFiles({junk});
    QVERIFY(window.waitUntilIdle(30000));
    QCOMPARE(failed.count(), 1);
    QCOMPARE(failed.at(0).at(0).toString(), junk);
    QVERIFY(window.runList()->allRuns().isEmpty());
  }
};

QTEST_MAIN(ImportTest)
#include "import_test.moc"
