// The main window on real databases: what each view shows, source highlighting, selection sync
// between kernel table and timeline, range filtering, compare, screenshots.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QFile>
#include <QMimeData>
#include <QSettings>
#include <QStandardPaths>
#include <QImage>
#include <QSyntaxHighlighter>
#include <QTextBlock>
#include <QtTest>

#include "core/run_writer.h"
#include "gui/breaks_view.h"
#include "gui/compare_view.h"
#include "gui/compile_time_view.h"
#include "gui/format.h"
#include "gui/graphs_view.h"
#include "gui/kernels_view.h"
#include "gui/main_window.h"
#include "gui/overview_view.h"
#include "gui/recompiles_view.h"
#include "gui/screenshot.h"
#include "gui/training_view.h"
#include "samples/synthetic_run.h"
#include "tests/gui/test_util.h"

using namespace tcprof;
using namespace tcprof::gui;
using namespace tcprof::gui_test;

namespace {
int row_with_location(const BreaksView* view, const QString& location) {
  for (int r = 0; r < view->proxy()->rowCount(); ++r) {
    if (view->proxy()->index(r, BreaksModel::Location).data().toString() == location) return r;
  }
  return -1;
}
}  // namespace

class ViewsTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    path_a_ = make_demo_db(dir_, "a.db");
    DemoOptions b;
    b.variant = 'b';
    path_b_ = make_demo_db(dir_, "b.db", b);
    window_ = std::make_unique<MainWindow>(false);
    window_->resize(1400, 900);
    window_->show();
    window_->openFiles({path_a_});
    QVERIFY(window_->waitUntilIdle(30000));
    QVERIFY(window_->currentRun());
  }

  void overviewNamesTheBiggestProblems() {
    const QString text = window_->overview()->text();
    QVERIFY(text.contains("Biggest problems"));
    QVERIFY(text.contains("3 recompiles"));
    QVERIFY(text.contains("graph breaks at 5 sites"));
    QVERIFY(text.contains("examples/gpt_small.pt"));
    // The problem links switch to the view that shows it.
    emit window_->overview()->openView("breaks");
    QCOMPARE(window_->currentViewName(), QString("breaks"));
  }

  void breakSelectionHighlightsTheSourceLine() {
    BreaksView* view = window_->breaks();
    QCOMPARE(view->proxy()->rowCount(), 5);
    const int row = row_with_location(view, "model.py:17");
    QVERIFY(row >= 0);
    view->table()->setCurrentIndex(view->proxy()->index(row, 0));
    QCOMPARE(view->source()->highlightedLine(), 17);
    // model.py sits next to the database: the real file is shown, line 17 highlighted.
    QCOMPARE(view->source()->highlightedText().trimmed(), QString("if attn.sum() > 0:"));
    QVERIFY(view->source()->toPlainText().contains("class Mlp(nn.Module):"));
    QVERIFY(view->detailsText().contains("torch.where"));
    QVERIFY(view->detailsText().contains("Block.forward"));

    view->typeFilter()->setCurrentIndex(view->typeFilter()->findText("scalar_output"));
    QCOMPARE(view->proxy()->rowCount(), 1);
    view->typeFilter()->setCurrentIndex(0);
    view->moduleFilter()->setText("blocks.3");
    QCOMPARE(view->proxy()->rowCount(), 2);
    view->moduleFilter()->clear();
    QCOMPARE(view->proxy()->rowCount(), 5);
  }

  void sourceComesFromTheDatabaseAlone() {
    // Nothing but the database in this directory: the recorded file gives the whole context.
    QTemporaryDir elsewhere;
    const QString path = make_demo_db(elsewhere, "alone.db");
    QVERIFY(!QFile::exists(elsewhere.filePath("model.py")));
    BreaksView view;
    view.setRun(load_demo(path));
    view.table()->setCurrentIndex(view.proxy()->index(row_with_location(&view, "model.py:17"), 0));
    QCOMPARE(view.source()->highlightedLine(), 17);
    QCOMPARE(view.source()->highlightedText().trimmed(), QString("if attn.sum() > 0:"));
    QVERIFY(view.source()->toPlainText().contains("attn = attn.softmax(dim=-1)"));  // not a break line
  }

  void unrecordedSourceSaysSoAndKeepsTheBreakLines() {
    // A database from before sources were stored: the lines recorded with the breaks, marked.
    QTemporaryDir elsewhere;
    DemoOptions o;
    o.record_source = false;
    const QString path = make_demo_db(elsewhere, "nosource.db", o);
    BreaksView view;
    view.setRun(load_demo(path));
    view.table()->setCurrentIndex(view.proxy()->index(row_with_location(&view, "model.py:32"), 0));
    QCOMPARE(view.source()->highlightedLine(), 32);
    QCOMPARE(view.source()->highlightedText().trimmed(), QString("keep = h.nonzero()"));
    QVERIFY(view.source()->toPlainText().contains("not recorded in this database"));
    QVERIFY(!view.source()->toPlainText().contains("attn = attn.softmax(dim=-1)"));
  }

  void recompilesShowGuardFailures() {
    RecompilesView* view = window_->recompiles();
    QCOMPARE(view->frameSelector()->currentIndex(), 0);  // the frame that recompiles
    QCOMPARE(view->recompileModel()->rowCount(), 3);
    view->recompileTable()->setCurrentIndex(view->recompileModel()->index(0, 0));
    QCOMPARE(view->failureModel()->rowCount(), 1);
    QCOMPARE(view->failureModel()->index(0, 0).data().toString(), QString("x.size(1) == 64"));
    QCOMPARE(view->failureModel()->index(0, 2).data().toString(), QString("64"));
    QCOMPARE(view->failureModel()->index(0, 3).data().toString(), QString("96"));
    QCOMPARE(view->failureModel()->index(0, 4).data().toString(), QString("model.py:56"));
    QCOMPARE(view->source()->highlightedLine(), 56);
    QVERIFY(view->source()->highlightedText().contains("def forward(self, x):"));
    view->recompileTable()->setCurrentIndex(view->recompileModel()->index(2, 0));
    QCOMPARE(view->failureModel()->index(0, 3).data().toString(), QString("160"));
    QCOMPARE(view->callTimeline()->callCount(), 40);
    QVERIFY(view->shapeChart()->seriesNames().contains(QString("input 0 · dim 1")));
    QVERIFY(!view->shapeChart()->seriesNames().contains(QString("input 0 · dim 2")));  // static
  }

  void aRunWithGpuWorkOpensOnItAndRanksPlacesApart() {
    // As `report --kernels` does: GPU kernels ranked by GPU time, apart from the host's ops.
    window_->showView("kernels");
    KernelsView* view = window_->kernels();
    QCOMPARE(view->placeFilter()->currentText(), QString("GPU work"));
    QCOMPARE(view->proxy()->rowCount(), 2);
    QCOMPARE(view->proxy()->index(0, KernelTableModel::Name).data().toString(), QString("sgemm_128x64_nn"));
    double shares = 0;
    for (int r = 0; r < view->model()->rowCount(); ++r) shares += view->model()->summaryRow(r).time_percent;
    QVERIFY(std::abs(shares - 100.0) < 0.01);  // shares within the GPU's time
    view->placeFilter()->setCurrentIndex(2);    // the host's kernels
    QCOMPARE(view->proxy()->rowCount(), 6);
    view->placeFilter()->setCurrentIndex(0);
    QCOMPARE(view->proxy()->rowCount(), 8);
    view->placeFilter()->setCurrentIndex(1);
  }

  // A summary run that sampled its calls says how many the GPU rows come from, in report's words.
  void aSampledSummarySaysHowManyCallsItsGpuRowsCover() {
    const QString path = dir_.filePath("sampled.db");
    write_sampled_gpu_run(path.toStdString(), 14, 86);
    KernelsView view;
    view.setRun(load_run_data(path, 1));
    QVERIFY2(view.rangeLabel()->text().contains("GPU: 14 of 100 calls"), qPrintable(view.rangeLabel()->text()));
    QVERIFY(view.rangeLabel()->toolTip().contains("--profile full records every call"));
    view.setRun(window_->currentRun());  // every call recorded: no such words
    QVERIFY(!view.rangeLabel()->text().contains("GPU:"));
    QVERIFY(view.rangeLabel()->toolTip().isEmpty());
  }

  void kernelTableAndTimelineStayInSync() {
    window_->showView("kernels");
    KernelsView* view = window_->kernels();
    KernelTimeline* timeline = view->timeline();
    QTest::qWait(20);
    // Table → timeline: the longest instance of the selected name is selected and highlighted.
    view->table()->setCurrentIndex(view->proxy()->index(0, 0));
    const QString name = view->selectedTableName();
    QVERIFY(!name.isEmpty());
    const auto& data = window_->currentRun()->kernels;
    QCOMPARE(timeline->highlightedName(), data.name_index(name));
    QVERIFY(timeline->selectedKernel().valid());

    // Timeline → table: zoom onto one kernel of another name and click it.
    KernelTimeline::KernelRef target;
    for (size_t l = 0; l < data.lanes.size() && !target.valid(); ++l) {
      for (size_t i = 0; i < data.lanes[l].size(); ++i) {
        if (data.names[data.lanes[l].name[i]] != name) {
          target = {static_cast<int>(l), i};
          break;
        }
      }
    }
    QVERIFY(target.valid());
    const auto& lane = data.lanes[static_cast<size_t>(target.lane)];
    const double s = static_cast<double>(lane.start[target.index]);
    timeline->setView(s - 200'000, s + 400'000);
    const QPoint at = timeline->centerOf(target).toPoint();
    QTest::mouseClick(timeline, Qt::LeftButton, {}, at);
    const QString clicked = data.names[lane.name[target.index]];
    QCOMPARE(view->selectedTableName(), clicked);
    QCOMPARE(timeline->selectedKernel().lane, target.lane);
    QCOMPARE(timeline->selectedKernel().index, target.index);
  }

  void timeRangeFiltersTheTable() {
    KernelsView* view = window_->kernels();
    const RunDataPtr run = window_->currentRun();
    const TimeRange range{run->time_range.start_ns, run->calls[5].start_ns};
    view->timeline()->setSelectedRange(range);
    int64_t expected = 0, shown = 0;
    for (const auto& lane : run->kernels.lanes) {
      for (int64_t s : lane.start) expected += s >= range.start_ns && s < range.end_ns;
    }
    for (int r = 0; r < view->model()->rowCount(); ++r) shown += view->model()->summaryRow(r).instances;
    QCOMPARE(shown, expected);
    QCOMPARE(expected, int64_t{5 * 60});
    QTest::keyClick(view->timeline(), Qt::Key_Escape);  // clears the range
    shown = 0;
    for (int r = 0; r < view->model()->rowCount(); ++r) shown += view->model()->summaryRow(r).instances;
    QCOMPARE(shown, int64_t{40 * 60});
  }

  void timelinePaintIsBoundedByPixels() {
    // 400k kernels: a full-run paint visits about one item per pixel column and lane.
    QTemporaryDir big;
    DemoOptions o;
    o.kernels_per_call = 10000;
    const RunDataPtr run = load_demo(make_demo_db(big, "big.db", o));
    QCOMPARE(run->summary.counts.kernels, int64_t{400000});
    KernelTimeline timeline;
    timeline.resize(1200, 300);
    timeline.setRun(run);
    QElapsedTimer timer;
    timer.start();
    const QImage image = timeline.grab().toImage();
    const qint64 ms = timer.elapsed();
    QVERIFY(!image.isNull());
    const int lanes = static_cast<int>(run->kernels.lanes.size());
    QVERIFY2(timeline.lastPaintItems() < (lanes + 3) * 1200 * 2,
             qPrintable(QString("painted %1 items").arg(timeline.lastPaintItems())));
    qInfo("full-run paint of 400k kernels: %lld ms, %d items", ms, timeline.lastPaintItems());
    QVERIFY(ms < 500);
  }

  void timelineKeyboardAndRangeReveal() {
    KernelTimeline* timeline = window_->kernels()->timeline();
    timeline->resetView();
    const double span = timeline->viewEnd() - timeline->viewStart();
    QTest::keyClick(timeline, Qt::Key_Plus);
    QVERIFY(qAbs((timeline->viewEnd() - timeline->viewStart()) - span / 2) < span * 1e-6);
    QTest::keyClick(timeline, Qt::Key_Right);
    QTest::keyClick(timeline, Qt::Key_0);
    QVERIFY(qAbs((timeline->viewEnd() - timeline->viewStart()) - span) < span * 1e-6);
    // With a range selected, selecting a name in the table reveals an instance inside it.
    const RunDataPtr run = window_->currentRun();
    const TimeRange range{run->calls[12].start_ns, run->calls[13].start_ns};
    timeline->setSelectedRange(range);
    QTableView* table = window_->kernels()->table();
    table->setCurrentIndex(table->model()->index(1, 0));
    const auto ref = timeline->selectedKernel();
    QVERIFY(ref.valid());
    const int64_t start = run->kernels.lanes[static_cast<size_t>(ref.lane)].start[ref.index];
    QVERIFY(start >= range.start_ns && start < range.end_ns);
    timeline->setSelectedRange({});

    // N / P step through the instances of the selected kernel.
    const auto& lanes = run->kernels.lanes;
    auto start_of = [&](KernelTimeline::KernelRef r) { return lanes[static_cast<size_t>(r.lane)].start[r.index]; };
    auto name_of = [&](KernelTimeline::KernelRef r) { return lanes[static_cast<size_t>(r.lane)].name[r.index]; };
    const auto first = timeline->selectedKernel();
    QTest::keyClick(timeline, Qt::Key_N);
    const auto next = timeline->selectedKernel();
    QCOMPARE(name_of(next), name_of(first));
    QVERIFY(start_of(next) > start_of(first));
    QTest::keyClick(timeline, Qt::Key_P);
    QCOMPARE(start_of(timeline->selectedKernel()), start_of(first));

    // Double-clicking a call on the calls row zooms to that call.
    timeline->resetView();
    const CallRow& call = run->calls[20];
    const double mid = static_cast<double>(call.start_ns) + static_cast<double>(call.duration_ns) / 2;
    const double x = 132 + (mid - timeline->viewStart()) * (timeline->width() - 132) / (timeline->viewEnd() - timeline->viewStart());
    QTest::mouseDClick(timeline, Qt::LeftButton, {}, QPoint(static_cast<int>(x), 24 + 12));
    QVERIFY(timeline->viewStart() <= static_cast<double>(call.start_ns));
    QVERIFY(timeline->viewEnd() >= static_cast<double>(call.start_ns + call.duration_ns));
    QVERIFY(timeline->viewEnd() - timeline->viewStart() < 1.2 * static_cast<double>(call.duration_ns));
    timeline->resetView();

    // The name filter narrows the summary table.
    window_->kernels()->placeFilter()->setCurrentIndex(0);
    window_->kernels()->nameFilter()->setText("fused");
    QCOMPARE(window_->kernels()->proxy()->rowCount(), 3);
    window_->kernels()->nameFilter()->clear();
    QCOMPARE(window_->kernels()->proxy()->rowCount(), 8);
  }

  void openingABigFileDoesNotBlock() {
    QTemporaryDir big;
    DemoOptions o;
    o.kernels_per_call = 5000;
    const QString path = make_demo_db(big, "big.db", o);
    MainWindow window(false);
    window.show();
    QElapsedTimer timer;
    timer.start();
    window.openFiles({path});
    QVERIFY2(timer.elapsed() < 50, "openFiles must hand the work to a worker thread");
    QVERIFY(window.waitUntilIdle(30000));
    QCOMPARE(window.currentRun()->summary.counts.kernels, int64_t{200000});
  }

  void manyCallsKeepTheUiResponsive() {
    // 30k calls and steps: JSON shapes, charts and tables are prepared off the UI thread or
    // decimated, so applying the loaded run stays far below a visible freeze.
    QTemporaryDir big;
    DemoOptions o;
    o.calls = 30000;
    o.steps = 30000;
    o.kernels_per_call = 2;
    const QString path = make_demo_db(big, "calls.db", o);
    QElapsedTimer gap;
    qint64 longest = 0;
    QTimer ticker;
    connect(&ticker, &QTimer::timeout, this, [&] {
      if (gap.isValid()) longest = std::max(longest, gap.restart());
      else gap.start();
    });
    ticker.start(5);
    for (const QString& view : {QString("recompiles"), QString("training"), QString("kernels")}) {
      MainWindow window(false);
      window.resize(1400, 900);
      window.showView(view);  // the visible view is the one that pays for its first paint
      window.show();
      gap.invalidate();
      window.openFiles({path});
      QVERIFY(window.waitUntilIdle(60000));
      QApplication::processEvents();
      QCOMPARE(window.currentRun()->summary.counts.calls, int64_t{30000});
      QElapsedTimer paint;
      paint.start();
      window.grab();
      qInfo("30k calls: first paint of %s %lld ms", qPrintable(view), paint.elapsed());
    }
    ticker.stop();
    qInfo("30k calls: longest UI-thread stall %lld ms", longest);
    QVERIFY2(longest < 400, qPrintable(QString("UI blocked for %1 ms").arg(longest)));
  }

  void closingTheShownFileClearsEveryView() {
    MainWindow window(false);
    window.show();
    window.openFiles({path_a_});
    QVERIFY(window.waitUntilIdle(30000));
    QAction* close = nullptr;
    for (QAction* a : window.findChildren<QAction*>()) {
      if (a->text() == "&Close File") close = a;
    }
    QVERIFY(close);
    close->trigger();
    QVERIFY(!window.currentRun());
    QVERIFY(window.runList()->files().isEmpty());
    for (const QString& view : MainWindow::viewNames()) {
      QVERIFY(window.showView(view));
      QVERIFY(!window.grab().isNull());
    }
    QVERIFY(window.overview()->text().contains("No run selected"));
  }

  void dropOpensFiles() {
    MainWindow window(false);
    window.show();
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path_b_)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    QVERIFY(window.waitUntilIdle(30000));
    QVERIFY(window.currentRun());
    QCOMPARE(window.currentRun()->path, path_b_);
  }

  void settingsRememberTabAndRecentFiles() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    {
      MainWindow window(true);
      window.show();
      window.openFiles({path_a_});
      QVERIFY(window.waitUntilIdle(30000));
      window.showView("graphs");
      window.close();
    }
    MainWindow again(true);
    QCOMPARE(again.currentViewName(), QString("graphs"));
    QCOMPARE(QSettings().value("recent").toStringList().value(0), path_a_);
    QSettings().clear();
  }

  void emptyAndMultiRunFilesShowEveryView() {
    // Two runs in one file, the second with no events at all: every view copes, and Compare
    // offers both runs of the file.
    QTemporaryDir dir;
    const QString path = make_demo_db(dir, "two.db");
    {
      RunInfo info;
      info.command = "explain";
      RunWriter w(path.toStdString(), info);
      w.close("failed");
    }
    MainWindow window(false);
    window.show();
    window.openFiles({path});
    QVERIFY(window.waitUntilIdle(30000));
    QCOMPARE(window.runList()->allRuns().size(), 2);
    QCOMPARE(window.currentRun()->run.id, Id{2});  // the newest run is shown
    QCOMPARE(window.currentRun()->summary.counts.kernels, int64_t{0});
    for (const QString& view : MainWindow::viewNames()) {
      QVERIFY(window.showView(view));
      QVERIFY(!window.grab().isNull());
    }
    QVERIFY(window.overview()->text().contains("compiled cleanly"));
    QCOMPARE(window.compare()->runA()->count(), 2);
    QSignalSpy ready(window.compare(), &CompareView::comparisonReady);
    window.compare()->comparePair(1, 0);
    QVERIFY(ready.count() > 0 || ready.wait(10000));
    QCOMPARE(window.compare()->breakModel()->rowCount(), 5);  // A = the empty run: all five "added" in B
  }

  void graphsShowCodeHighlighted() {
    GraphsView* view = window_->graphs();
    QCOMPARE(view->graphModel()->rowCount(), 5);  // attention + root + three recompiles
    view->graphTable()->setCurrentIndex(view->graphModel()->index(1, 0));
    QVERIFY(view->codeView()->toPlainText().contains("fused_layer_norm_0"));
    // Compile ids, not internal row ids; the code opens on the kernel, not the prelude.
    QCOMPARE(view->graphModel()->index(1, 0).data().toString(), QString("0/0"));
    QVERIFY(view->codeView()->textCursor().block().text().startsWith("extern \"C\" void fused_layer_norm_0"));
    QCOMPARE(GraphsView::first_kernel_line("#include <cmath>\n\n// aten::add\nstatic __attribute__((noinline)) void k0_range(\n"), 2);
    QVERIFY(view->irView()->toPlainText().contains("aten::layer_norm"));
    QCOMPARE(view->guardModel()->rowCount(), 5);
    QVERIFY(!view->codeView()->document()->findChildren<QSyntaxHighlighter*>().isEmpty());
  }

  void compileTimeSplitsEachCompileByStage() {
    CompileTimeView* view = window_->compileTime();
    QAbstractItemModelTester tester(view->compileModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester repeats(view->repeatModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    const RunDataPtr run = window_->currentRun();
    QVERIFY(run);
    view->setRun(run);
    const analysis::CompileTimeReport& t = run->compile_time;
    QCOMPARE(view->compileModel()->rowCount(), static_cast<int>(t.compiles.size()));
    QVERIFY(t.compiles.size() >= 2);
    // The demo's tcprof phases: capture is Dynamo, lower/schedule/codegen Inductor, cc/load the
    // code compile; each row's stages add up to its total.
    for (int row = 0; row < view->compileModel()->rowCount(); ++row) {
      double sum = 0;
      for (int s = 0; s < analysis::kCompileStages; ++s) sum += view->compileModel()->index(row, 3 + s).data(Qt::UserRole).toDouble();
      QCOMPARE(sum, view->compileModel()->index(row, 2).data(Qt::UserRole).toDouble());
      QVERIFY(view->compileModel()->index(row, 3).data(Qt::UserRole).toDouble() > 0);  // dynamo: capture
      QVERIFY(view->compileModel()->index(row, 6).data(Qt::UserRole).toDouble() > 0);  // code compile: cc
    }
    QVERIFY(view->summaryText().contains(QString("in %1 compiles").arg(t.compiles.size())));
    const auto bars = view->chartView()->chart()->series();
    QCOMPARE(bars.size(), 1);
    view->setRun(nullptr);
    QCOMPARE(view->compileModel()->rowCount(), 0);
    QCOMPARE(view->summaryText(), QString("No compiles in this run."));
  }

  void trainingMarksRecompiles() {
    TrainingView* view = window_->training();
    QCOMPARE(view->recompileSteps(), (std::vector<int64_t>{9, 21, 30}));
    QVERIFY(view->chartView()->chart()->series().size() >= 3);
    // The step and its phases as report prints them (analysis::summarize_run's medians).
    const analysis::RunSummary& m = window_->currentRun()->summary;
    QVERIFY(m.ms_per_step_backward > 0);
    QVERIFY2(view->summaryText().contains("median step " + format_ns(m.ms_per_step * 1e6)), qPrintable(view->summaryText()));
    QVERIFY2(view->summaryText().contains("backward <b>" + format_ns(m.ms_per_step_backward * 1e6)), qPrintable(view->summaryText()));
  }

  void compareShowsAddedAndRemovedBreaks() {
    window_->openFiles({path_b_});
    QVERIFY(window_->waitUntilIdle(30000));
    CompareView* view = window_->compare();
    QCOMPARE(view->runA()->count(), 2);
    QSignalSpy ready(view, &CompareView::comparisonReady);
    view->comparePair(0, 1);
    QVERIFY(ready.count() > 0 || ready.wait(10000));
    QStringList changes;
    for (int r = 0; r < view->breakModel()->rowCount(); ++r) changes << view->breakModel()->index(r, 0).data().toString();
    QCOMPARE(changes.count("added"), 1);
    QCOMPARE(changes.count("removed"), 1);
    QVERIFY(view->kernelModel()->rowCount() == 8);
  }

  void screenshotsRenderEveryView() {
    for (const QString& view : MainWindow::viewNames()) {
      const QString out = dir_.filePath(view + ".png");
      ScreenshotOptions options;
      options.view = view;
      options.size = QSize(1000, 700);
      QCOMPARE(take_screenshot({path_a_, path_b_}, out, options), 0);
      const QImage image(out);
      QCOMPARE(image.size(), QSize(1000, 700));
    }
    ScreenshotOptions bad;
    bad.view = "nonsense";
    QCOMPARE(take_screenshot({path_a_}, dir_.filePath("x.png"), bad), 2);
  }

 private:
  QTemporaryDir dir_;
  QString path_a_, path_b_;
  std::unique_ptr<MainWindow> window_;
};

QTEST_MAIN(ViewsTest)
#include "views_test.moc"
