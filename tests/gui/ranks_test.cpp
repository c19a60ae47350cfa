// A multi-rank import in the GUI: the real PyTorch 2.6 two-rank fixture (rank 1 compiles four
// times and breaks twice, rank 0 once) imported with the real importer. The rank selector picks
// the rank every view shows, the Ranks view lists both ranks and the six differences report
// prints, and a single-process run shows neither.
#include <QAbstractItemModelTester>
#include <QtTest>

#include "importers/trace_import.h"
#include "gui/main_window.h"
#include "gui/ranks_view.h"
#include "gui/recompiles_view.h"
#include "gui/screenshot.h"
#include "tests/gui/demo_run.h"
#include "tests/gui/test_util.h"

using namespace tcprof;
using namespace tcprof::gui;
using namespace tcprof::gui_test;

class RanksTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    path_ = dir_.filePath("ranks.db");
    import::ImportResult r = import::import_traces(
        {{std::string(TCPROF_TRACE_FIXTURES) + "/ranks_torch2.6_cpu"}, {}, path_.toStdString()});
    QVERIFY(r.errors.empty());
    QCOMPARE(r.runs.size(), size_t{2});
  }

  void selectorSwitchesRankAndKeepsTheView() {
    MainWindow window(false);
    window.resize(1400, 900);
    window.show();
    window.openFiles({path_});
    QVERIFY(window.waitUntilIdle(30000));
    QVERIFY(window.currentRun());
    QCOMPARE(window.currentRun()->run.rank, 1);  // the newest run: rank 1
    QComboBox* box = window.rankSelector();
    QVERIFY(box->isVisibleTo(&window));
    QCOMPARE(box->count(), 2);
    QCOMPARE(box->currentText(), QString("1 of 2 (run #2)"));
    QCOMPARE(window.recompiles()->recompileModel()->rowCount(), 1);  // forward's 0/1 (rank 1)

    window.showView("recompiles");
    box->setCurrentIndex(0);
    emit box->activated(0);
    QVERIFY(window.waitUntilIdle(30000));
    QCOMPARE(window.currentRun()->run.rank, 0);
    QCOMPARE(window.currentViewName(), QString("recompiles"));
    QCOMPARE(window.recompiles()->recompileModel()->rowCount(), 0);  // rank 0 never recompiled
    QCOMPARE(window.runList()->currentRun().run_id, window.currentRun()->run.id);
    QCOMPARE(box->currentIndex(), 0);
  }

  void ranksViewListsRanksAndDivergence() {
    MainWindow window(false);
    window.show();
    window.openFiles({path_});
    QVERIFY(window.waitUntilIdle(30000));
    RanksView* view = window.ranks();
    QAbstractItemModelTester ranks_tester(view->rankModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester items_tester(view->divergenceModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    TableModel* ranks = view->rankModel();
    QCOMPARE(ranks->rowCount(), 2);
    // Rank, Run, Status, Frames, Compiles, Recompiles, Graph breaks.
    QCOMPARE(ranks->index(0, 4).data().toString(), QString("1"));
    QCOMPARE(ranks->index(1, 4).data().toString(), QString("4"));
    QCOMPARE(ranks->index(1, 5).data().toString(), QString("2"));
    QCOMPARE(ranks->index(0, 6).data().toString(), QString("0"));
    QCOMPARE(ranks->index(1, 6).data().toString(), QString("2"));
    QCOMPARE(ranks->index(1, 0).data().toString(), QString("1 (shown)"));
    // The six differences of report, as report words them.
    TableModel* items = view->divergenceModel();
    QCOMPARE(items->rowCount(), 6);
    QStringList rows;
    for (int r = 0; r < items->rowCount(); ++r) {
      rows << items->index(r, 0).data().toString() + " " + items->index(r, 1).data().toString() + ": " +
                  items->index(r, 2).data().toString();
    }
    QVERIFY2(rows.contains("compile 0/1: on rank 1 only; missing on 0"), qPrintable(rows.join("\n")));
    QVERIFY2(rows.contains("graph breaks in forward: rank 0: 0, rank 1: 2"), qPrintable(rows.join("\n")));
    QVERIFY(view->summaryText().contains("6</b> difference(s)"));

    // Activating rank 0's row shows rank 0.
    view->rankTable()->setCurrentIndex(ranks->index(0, 0));
    emit view->rankTable()->activated(ranks->index(0, 0));
    QVERIFY(window.waitUntilIdle(30000));
    QCOMPARE(window.currentRun()->run.rank, 0);
    QCOMPARE(view->rankModel()->index(0, 0).data().toString(), QString("0 (shown)"));
  }

  void singleProcessRunHasNoRanks() {
    const QString path = make_demo_db(dir_, "single.db");
    MainWindow window(false);
    window.show();
    window.openFiles({path});
    QVERIFY(window.waitUntilIdle(30000));
    QVERIFY(!window.rankSelector()->isVisibleTo(&window));
    QCOMPARE(window.ranks()->rankModel()->rowCount(), 0);
    QVERIFY(window.ranks()->summaryText().contains("not part of a multi-rank job"));
  }

  void screenshotOfTheRanksView() {
    ScreenshotOptions options;
    options.view = "ranks";
    options.size = QSize(1200, 700);
    const QString out = dir_.filePath("ranks.png");
    QCOMPARE(take_screenshot({path_}, out, options), 0);
    QCOMPARE(QImage(out).size(), QSize(1200, 700));
  }

 private:
  QTemporaryDir dir_;
  QString path_;
};

QTEST_MAIN(RanksTest)
#include "ranks_test.moc"
