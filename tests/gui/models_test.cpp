// Item models and the data behind them: every model passes QAbstractItemModelTester, and shows
// what the demo run holds (sites, kernel aggregates, comparisons, problems).
#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QtTest>

#include "analysis/kernel_stats.h"
#include "core/run_writer.h"
#include "gui/breaks_model.h"
#include "gui/format.h"
#include "gui/timeline_ruler.h"
#include "gui/kernel_table_model.h"
#include "gui/run_comparison.h"
#include "gui/run_list.h"
#include "gui/table_model.h"
#include "tests/gui/test_util.h"

using namespace tcprof;
using namespace tcprof::gui;
using namespace tcprof::gui_test;

class ModelsTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    run_ = load_demo(make_demo_db(dir_, "a.db"));
    DemoOptions b;
    b.variant = 'b';
    run_b_ = load_demo(make_demo_db(dir_, "b.db", b));
  }

  void breaksModelShowsDeduplicatedSites() {
    BreaksModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSites(run_->break_sites);
    QCOMPARE(model.rowCount(), 5);  // five sites, each hit once per compile
    QCOMPARE(model.site(0).count, 4);  // one compile + three recompiles
    QCOMPARE(model.types().size(), 5);

    BreaksFilterProxy proxy;
    QAbstractItemModelTester proxy_tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.setSourceModel(&model);
    proxy.setTypeFilter("side_effect");
    QCOMPARE(proxy.rowCount(), 1);
    QCOMPARE(proxy.index(0, BreaksModel::Location).data().toString(), QString("model.py:33"));
    proxy.setTypeFilter("");
    proxy.setModuleFilter("mlp");
    QCOMPARE(proxy.rowCount(), 2);
    proxy.setModuleFilter("");
    proxy.sort(BreaksModel::Location, Qt::AscendingOrder);
    QCOMPARE(proxy.index(0, BreaksModel::Location).data().toString(), QString("model.py:17"));
    QCOMPARE(proxy.index(4, BreaksModel::Location).data().toString(), QString("model.py:59"));
  }

  void kernelTableModelHasNsysColumns() {
    KernelTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setRows(run_, run_->kernel_summary);
    QCOMPARE(model.rowCount(), 8);
    QCOMPARE(model.headerData(KernelTableModel::Med, Qt::Horizontal, Qt::DisplayRole).toString(), QString("Med"));
    int64_t instances = 0;
    double percent = 0;
    for (int r = 0; r < model.rowCount(); ++r) {
      instances += model.summaryRow(r).instances;
      percent += model.summaryRow(r).time_percent;
      if (r > 0) QVERIFY(model.summaryRow(r - 1).total_ns >= model.summaryRow(r).total_ns);
    }
    QCOMPARE(instances, int64_t{40 * 60});
    QVERIFY(qAbs(percent - 100.0) < 1e-6);
    // The GUI's in-memory statistics are the CLI's, read from the store (analysis/kernel_stats.h).
    RunReader reader(run_->path.toStdString());
    const auto stats = analysis::kernel_stats(reader, 1);
    QCOMPARE(stats.size(), size_t{8});
    QCOMPARE(stats[0].name, model.summaryRow(0).name);
    QCOMPARE(stats[0].total_ns, model.summaryRow(0).total_ns);
    QCOMPARE(stats[0].median_ns, model.summaryRow(0).median_ns);
    QCOMPARE(stats[0].stddev_ns, model.summaryRow(0).stddev_ns);
    for (size_t i = 0; i < stats.size(); ++i) {
      QCOMPARE(stats[i].instances, model.summaryRow(static_cast<int>(i)).instances);
      QCOMPARE(stats[i].median_ns, model.summaryRow(static_cast<int>(i)).median_ns);
    }

    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(KernelTableModel::SortRole);
    QAbstractItemModelTester proxy_tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.sort(KernelTableModel::Instances, Qt::AscendingOrder);
    QVERIFY(proxy.index(0, KernelTableModel::Instances).data(KernelTableModel::SortRole).toLongLong() <=
            proxy.index(7, KernelTableModel::Instances).data(KernelTableModel::SortRole).toLongLong());
  }

  void rangeSummaryCountsOnlyKernelsStartingInRange() {
    const TimeRange all = run_->time_range;
    const TimeRange first_half{all.start_ns, all.start_ns + (all.end_ns - all.start_ns) / 2};
    int64_t expected = 0;
    for (const auto& lane : run_->kernels.lanes) {
      for (int64_t s : lane.start) expected += s >= first_half.start_ns && s < first_half.end_ns;
    }
    int64_t got = 0;
    for (const auto& r : run_->kernels.summarize(first_half)) got += r.instances;
    QCOMPARE(got, expected);
    QVERIFY(got > 0 && got < 40 * 60);
  }

  void foldedSummaryRowsCountInFully() {
    const QString path = dir_.filePath("folded.db");
    {
      RunInfo info;
      info.command = "run";
      RunWriter w(path.toStdString(), info);
      const uint32_t name = w.intern("fused_add"), kind = w.intern("generated"), cpu = w.intern("cpu");
      KernelEvent k;
      k.name_id = name;
      k.kind_id = kind;
      k.device_id = cpu;
      k.start_ns = 100;
      k.duration_ns = 10;
      w.record(k);
      KernelSummaryEvent s;
      s.name_id = name;
      s.kind_id = kind;
      s.device_id = cpu;
      s.start_ns = 200;
      s.end_ns = 1200;
      s.count = 9;
      s.total_ns = 180;
      s.min_ns = 15;
      s.max_ns = 30;
      s.sum_sq_ns2 = 9 * 400;
      w.record(s);
      w.close();
    }
    const RunDataPtr run = load_run_data(path, 1);
    const auto rows = run->kernels.summarize();
    QCOMPARE(rows.size(), size_t{1});
    QCOMPARE(rows[0].instances, int64_t{10});
    QCOMPARE(rows[0].total_ns, int64_t{190});
    QCOMPARE(rows[0].min_ns, int64_t{10});
    QCOMPARE(rows[0].max_ns, int64_t{30});
    QCOMPARE(rows[0].median_ns, 20.0);
    QCOMPARE(run->kernels.total, int64_t{10});
  }

  void tableModelSortsNumbersNumerically() {
    TableModel model({"Name", "Time"});
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setRows({{TableModel::text("a"), TableModel::duration(9e6)},
                   {TableModel::text("b"), TableModel::duration(10e6)},
                   {TableModel::text("c"), TableModel::duration(850)}});
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(Qt::UserRole);
    proxy.sort(1, Qt::DescendingOrder);
    QCOMPARE(proxy.index(0, 0).data().toString(), QString("b"));
    QCOMPARE(proxy.index(0, 1).data().toString(), QString("10.0 ms"));
    QCOMPARE(proxy.index(2, 1).data().toString(), QString("850 ns"));
  }

  void runListHoldsSeveralFiles() {
    RunList list;
    QAbstractItemModelTester tester(list.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    RunReader a(run_->path.toStdString()), b(run_b_->path.toStdString());
    list.setFile(run_->path, a.runs());
    list.setFile(run_b_->path, b.runs());
    list.setFile(run_->path, a.runs());  // re-listing a file does not duplicate it
    QCOMPARE(list.files().size(), 2);
    QCOMPARE(list.allRuns().size(), 2);
    QSignalSpy spy(&list, &RunList::runSelected);
    QVERIFY(list.selectRun(run_b_->path, 1));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(list.currentRun().path, run_b_->path);
    list.removeFile(run_->path);
    QCOMPARE(list.allRuns().size(), 1);
  }

  void comparisonFindsAddedAndRemovedBreaks() {
    const RunComparison cmp = compare_runs(*run_, *run_b_);
    QCOMPARE(cmp.added(), 1);
    QCOMPARE(cmp.removed(), 1);
    QCOMPARE(QString::fromStdString(cmp.changes.sites.front().site.break_id), QString("TCB0005"));  // added first
    bool found_faster = false;
    for (const analysis::TimeDelta& k : cmp.changes.kernels) {
      if (k.name == "fused_softmax_masked_fill") found_faster = k.delta() < 0;
    }
    QVERIFY(found_faster);
  }

  void formatsReadWell() {
    QCOMPARE(format_ns(850), QString("850 ns"));
    QCOMPARE(format_ns(12'340), QString::fromUtf8("12.3 µs"));
    QCOMPARE(format_ns(4.695e6), QString("4.70 ms"));
    QCOMPARE(format_ns(0), QString("0"));
    QCOMPARE(timeline::tick_label(0, 1e6), QString("0"));
    QCOMPARE(timeline::tick_label(250e6, 50e6), QString("250 ms"));
    QCOMPARE(timeline::tick_label(1.13002e9, 2e4), QString("1.13002 s"));
    QCOMPARE(timeline::nice_step(1e5, 90), 1e7);
    QCOMPARE(nice_integer_interval(39), 5.0);
    QCOMPARE(nice_integer_interval(8), 1.0);
  }

  void problemsAreRankedAndPointAtViews() {
    // The loader ranks them with analysis/problems.h, as `tcprof report` does.
    const auto& problems = run_->problems;
    QCOMPARE(problems.size(), size_t{3});
    QCOMPARE(problems[0].view, std::string("recompiles"));  // three recompiles outweigh the breaks
    QVERIFY(problems[0].detail.find("expected 64, got 96") != std::string::npos);
    QCOMPARE(problems[1].view, std::string("breaks"));
    QVERIFY(problems[1].detail.find("model.py:") != std::string::npos);
  }

 private:
  QTemporaryDir dir_;
  RunDataPtr run_, run_b_;
};

QTEST_MAIN(ModelsTest)
#include "models_test.moc"
