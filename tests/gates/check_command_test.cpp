// `tcprof check` as a CI job runs it: the gate_variants models against gate_base's baseline.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "analysis/break_sites.h"
#include "core/run_reader.h"
#include "tests/gates/gates_support.h"

namespace tcprof {
namespace {

using testing::sample_model;
using testing::TempDir;
using testing::tcprof;

std::string check_variant(const TempDir& dir, const std::string& variant, const std::string& baseline,
                          const std::string& extra = "") {
  return "check " + sample_model(variant) + " --input 'f32[4,8]' --iters 4 " + extra + " --baseline " + baseline +
         " --db " + dir.file(variant + ".db");
}

TEST(CheckCommand, SameModelPasses) {
  TempDir dir;
  std::string baseline = testing::write_base_baseline(dir);
  ASSERT_FALSE(baseline.empty());
  auto r = tcprof(check_variant(dir, "gate_base", baseline));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASS: matches"), std::string::npos) << r.output;
}

TEST(CheckCommand, AddedPrintFailsAndNamesTheLine) {
  TempDir dir;
  std::string baseline = testing::write_base_baseline(dir);
  auto r = tcprof(check_variant(dir, "gate_print", baseline) + " 2>" + dir.file("stderr"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("REGRESSION new graph break TCB0001 side_effect"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gate_variants.py:25"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| print(\"debug\", y.shape)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hint: remove print()"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("FAIL: 1 regression"), std::string::npos) << r.output;
  // The existing branch moved into a resume frame: it is still the same site, not a new break.
  EXPECT_EQ(r.output.find("TCB0004"), std::string::npos) << r.output;
  std::string err = testing::read_file(dir.file("stderr"));
  EXPECT_NE(err.find("tcprof: error: check failed: 1 regression"), std::string::npos) << err;
  // The model's own print() goes to stderr, never into the report.
  EXPECT_EQ(r.output.find("debug [4, 8]"), std::string::npos);
}

TEST(CheckCommand, RemovedBreakIsImprovedAndSaysHowToUpdate) {
  TempDir dir;
  std::string baseline = testing::write_base_baseline(dir);
  auto r = tcprof(check_variant(dir, "gate_fixed", baseline) + " --format text");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("improved: graph break removed: TCB0004"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("IMPROVED: 1 improvement"), std::string::npos) << r.output;
  // The exact command: the user's own arguments with --update-baseline, no --format.
  size_t at = r.output.find("  tcprof check ");
  ASSERT_NE(at, std::string::npos) << r.output;
  std::string command = r.output.substr(at + 2, r.output.find('\n', at) - at - 2);
  EXPECT_NE(command.find("gate_fixed.pt --input 'f32[4,8]' --iters 4"), std::string::npos) << command;
  EXPECT_NE(command.find("--update-baseline"), std::string::npos) << command;
  EXPECT_EQ(command.find("--format"), std::string::npos) << command;
  // Running it locks the improvement in: the next check passes.
  auto update = testing::run_command("cd " + dir.path().string() + " && " + std::string(TCPROF_BIN) +
                                     command.substr(command.find(' ')));
  ASSERT_EQ(update.exit_code, 0) << update.output;
  auto again = tcprof(check_variant(dir, "gate_fixed", baseline));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("PASS"), std::string::npos) << again.output;
}

TEST(CheckCommand, LineShiftAlonePasses) {
  TempDir dir;
  std::string baseline = testing::write_base_baseline(dir);
  auto r = tcprof(check_variant(dir, "gate_shifted", baseline));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASS: matches"), std::string::npos) << r.output;
  // The shift is real: the database has the new line.
  RunReader reader(dir.file("gate_shifted.db"));
  auto sites = analysis::break_sites(reader, reader.runs().back().id);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].line, 45);
}

TEST(CheckCommand, HintsWrapToTheTerminalWidthNotAFixedOne) {
  TempDir dir;
  std::string baseline = testing::write_base_baseline(dir, "--vary 0:0=2..9");
  ASSERT_FALSE(baseline.empty());
  std::string args = check_variant(dir, "gate_base", baseline, "--vary 0:0=2..9 --recompile-limit 1") + " 2>/dev/null";
  auto wide = testing::run_command("COLUMNS=250 " + std::string(TCPROF_BIN) + " " + args);
  EXPECT_NE(wide.output.find("    hint: frames past --recompile-limit (or under an eager stance) run uncompiled: reduce "
                             "distinct input shapes, mark dimensions dynamic or raise the limit\n"),
            std::string::npos)
      << wide.output;
  auto narrow = testing::run_command("COLUMNS=60 " + std::string(TCPROF_BIN) + " " + args);
  EXPECT_NE(narrow.output.find("    hint: frames past --recompile-limit (or under an eager\n"), std::string::npos)
      << narrow.output;
}

TEST(CheckCommand, MoreRecompilesFail) {
  TempDir dir;
  std::string baseline = testing::write_base_baseline(dir);
  auto r = tcprof(check_variant(dir, "gate_base", baseline, "--vary 0:0=2..9") + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("REGRESSION more recompiles in forward"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("guard x.size(0) == 2 failed: tensor 'x' size mismatch at index 0"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("| y = torch.relu(x)"), std::string::npos) << r.output;  // first use of x
  EXPECT_NE(r.output.find("--dynamic I:D"), std::string::npos) << r.output;
  // A different workload than the baseline's is worth a warning: counts depend on it.
  EXPECT_NE(r.output.find("warning: different workload"), std::string::npos) << r.output;
}

TEST(CheckCommand, MoreEagerFallbacksFail) {
  TempDir dir;
  std::string baseline = testing::write_base_baseline(dir, "--vary 0:0=2..9");
  ASSERT_FALSE(baseline.empty());
  // Past a recompile limit of 1 the frame runs eagerly: calls that were compiled no longer are.
  auto r = tcprof(check_variant(dir, "gate_base", baseline, "--vary 0:0=2..9 --recompile-limit 1") + " 2>/dev/null");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("REGRESSION more eager fallbacks in forward"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hit recompile_limit (1)"), std::string::npos) << r.output;
  // Every line but the copy-paste update command fits 80 columns.
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    size_t columns = 0;
    for (unsigned char c : line) columns += (c & 0xC0) != 0x80;
    // Paths are never cut: the model's (as long as the build folder) and the temporary folder's.
    if (line.find("--baseline") == std::string::npos && line.find("/tmp") == std::string::npos &&
        line.find("gate_base.pt") == std::string::npos) {
      EXPECT_LE(columns, 80u) << line;
    }
  }
}

TEST(CheckCommand, ReadsARecordedDatabaseWithTheSameVerdict) {
  TempDir dir;
  std::string baseline = testing::write_base_baseline(dir);
  std::string db = dir.file("print.db");
  auto run = tcprof("run " + sample_model("gate_print") + " --input 'f32[4,8]' --iters 4 --db " + db + " 2>&1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto r = tcprof("check " + db + " --baseline " + baseline);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("gate_variants.py:25"), std::string::npos) << r.output;
  auto missing_run = tcprof("check " + db + " --baseline " + baseline + " --run 99", true);
  EXPECT_EQ(missing_run.exit_code, 2) << missing_run.output;
}

TEST(CheckCommand, LimitsGateWithoutABaseline) {
  TempDir dir;
  std::string model = sample_model("gate_print") + " --input 'f32[4,8]' --iters 2 --db " + dir.file("p.db");
  auto over = tcprof("check " + model + " --max-graph-breaks 1 2>/dev/null");
  EXPECT_EQ(over.exit_code, 1) << over.output;
  EXPECT_NE(over.output.find("2 graph breaks, more than --max-graph-breaks 1"), std::string::npos) << over.output;
  auto within = tcprof("check " + model + " --max-graph-breaks 2 --max-recompiles 0 2>/dev/null");
  EXPECT_EQ(within.exit_code, 0) << within.output;
}

TEST(CheckCommand, MissingOrMalformedBaselineIsExit2WithOneLine) {
  TempDir dir;
  std::string model = sample_model("gate_base") + " --input 'f32[4,8]' --db " + dir.file("x.db");
  auto missing = testing::run_command(std::string(TCPROF_BIN) + " check " + model + " --baseline " +
                                      dir.file("none.json") + " 2>&1 >/dev/null");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(testing::count_lines(missing.output), 1) << missing.output;
  EXPECT_NE(missing.output.find("does not exist"), std::string::npos) << missing.output;
  std::ofstream(dir.file("bad.json")) << "{\"tcprof_baseline\": 1, \"frames\": 3}";
  auto bad = testing::run_command(std::string(TCPROF_BIN) + " check " + model + " --baseline " +
                                  dir.file("bad.json") + " 2>&1 >/dev/null");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(testing::count_lines(bad.output), 1) << bad.output;
  EXPECT_NE(bad.output.find("malformed"), std::string::npos) << bad.output;
  auto nothing = tcprof("check " + model, true);
  EXPECT_EQ(nothing.exit_code, 2) << nothing.output;
  auto format = tcprof("check " + model + " --baseline " + dir.file("bad.json") + " --format xml", true);
  EXPECT_EQ(format.exit_code, 2) << format.output;
}

}  // namespace
}  // namespace tcprof

namespace tcprof {
namespace {

// docs/ci.md's example as a CI job runs it: the committed baseline passes, an added print() fails
// on its line.
TEST(CiExample, ScriptsDoWhatTheDocsShow) {
  std::string env = std::string("TCPROF=") + TCPROF_BIN + " ";
  std::string dir = std::string(TCPROF_SOURCE_DIR) + "/samples/ci_example/";
  testing::TempDir out;
  auto pass = testing::run_command(env + "OUT_DIR=" + out.path().string() + " sh " + dir + "ci_check.sh 2>&1");
  EXPECT_EQ(pass.exit_code, 0) << pass.output;
  EXPECT_NE(pass.output.find("PASS: matches"), std::string::npos) << pass.output;
  auto demo = testing::run_command(env + "sh " + dir + "demo_print.sh");
  EXPECT_NE(demo.output.find("REGRESSION new graph break TCB0001 side_effect\n    at model.py:21"), std::string::npos)
      << demo.output;
  EXPECT_NE(demo.output.find("exit code: 1"), std::string::npos) << demo.output;
}

}  // namespace
}  // namespace tcprof
