// One definition of "the same break site" (analysis/break_sites.h) seen three ways: `tcprof diff`,
// `tcprof check` and the GUI's Compare view. A break moved by one line is the same site in all
// three; a break whose line changed is a new site in all three. Real runs of the gate samples:
// gate_shifted moves gate_base's branch one line down, gate_changed rewrites its condition.
#include <QProcess>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "gui/run_comparison.h"
#include "tests/gui/test_util.h"

using namespace tcprof;
using namespace tcprof::gui;

class SitesTest : public QObject {
  Q_OBJECT

  struct Result {
    int exit_code = -1;
    QString out;
  };

  // stdout only: a failing check also says so on stderr.
  Result tcprof(const QStringList& args) {
    QProcess p;
    p.start(TCPROF_BIN, args);
    p.waitForFinished(120000);
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput())};
  }

  QString model(const QString& name) { return QString(TCPROF_SAMPLE_MODELS_DIR) + "/" + name + ".pt"; }

  // Runs a variant (recording a database) and gates it against gate_base's baseline.
  Result check(const QString& variant) {
    return tcprof({"check", model(variant), "--input", "f32[4,8]", "--iters", "4", "--baseline", baseline_,
                   "--db", db(variant), "--format", "json"});
  }

  QString db(const QString& variant) { return dir_.filePath(variant + ".db"); }

  struct Verdicts {
    int diff_added = -1, diff_removed = -1, gui_added = -1, gui_removed = -1;
    QString check_verdict;
  };

  Verdicts compare_with_base(const QString& variant) {
    Verdicts v;
    const Result gate = check(variant);
    const auto verdict = nlohmann::json::parse(gate.out.toStdString(), nullptr, false);
    if (verdict.is_object()) v.check_verdict = QString::fromStdString(verdict.value("verdict", ""));
    const Result diff = tcprof({"diff", db("gate_base"), db(variant), "--json"});
    const auto d = nlohmann::json::parse(diff.out.toStdString(), nullptr, false);
    if (d.is_object()) {
      v.diff_added = static_cast<int>(d["breaks_added"].size());
      v.diff_removed = static_cast<int>(d["breaks_removed"].size());
    }
    const RunComparison cmp = compare_runs(*load_run_data(db("gate_base"), 1), *load_run_data(db(variant), 1));
    v.gui_added = cmp.added();
    v.gui_removed = cmp.removed();
    return v;
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    if (!QFile::exists(model("gate_changed"))) QSKIP("sample models not built");
    baseline_ = dir_.filePath("baseline.json");
    const Result base = tcprof({"check", model("gate_base"), "--input", "f32[4,8]", "--iters", "4", "--baseline",
                                baseline_, "--update-baseline", "--db", db("gate_base")});
    QCOMPARE(base.exit_code, 0);
  }

  void aBreakMovedByOneLineIsTheSameSiteEverywhere() {
    const Verdicts v = compare_with_base("gate_shifted");
    QCOMPARE(v.check_verdict, QString("pass"));
    QCOMPARE(v.diff_added, 0);
    QCOMPARE(v.diff_removed, 0);
    QCOMPARE(v.gui_added, 0);
    QCOMPARE(v.gui_removed, 0);
  }

  void aChangedSourceLineIsANewSiteEverywhere() {
    const Verdicts v = compare_with_base("gate_changed");
    QCOMPARE(v.check_verdict, QString("regression"));
    QCOMPARE(v.diff_added, 1);
    QCOMPARE(v.diff_removed, 1);
    QCOMPARE(v.gui_added, 1);
    QCOMPARE(v.gui_removed, 1);
  }

 private:
  QTemporaryDir dir_;
  QString baseline_;
};

QTEST_MAIN(SitesTest)
#include "sites_test.moc"
