// Every reader works on an imported run as on a native one: report, check (text, github, junit),
// diff of two imports, export --chrome; `check LOG --baseline` imports on the fly; `import --json`.
#include <gtest/gtest.h>

#include <fstream>

#include <zlib.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/test_support.h"

namespace tcprof::testing {
namespace {

const std::string kBin = TCPROF_BIN;
const std::string kFixtures = TCPROF_TRACE_FIXTURES;
const std::string kBreaks = kFixtures + "/breaks_torch2.11_h100.log.gz";
const std::string kMlp = kFixtures + "/mlp_torch2.11_h100.log.gz";

TEST(ImportReaders, ImportJsonHasTheDocumentedKeys) {
  TempDir dir;
  auto r = run_command(kBin + " import " + kBreaks + " --db " + dir.file("x.db") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j["runs"].size(), 1u);
  const auto& run = j["runs"][0];
  for (const char* key : {"rank", "pytorch_version", "frames", "compiles", "compiles_incomplete", "graph_breaks",
                          "break_sites", "recompiles", "kernels", "damaged_records", "unknown_records", "db"}) {
    EXPECT_TRUE(run.contains(key)) << key;
  }
  EXPECT_EQ(run["break_sites"], 4);
  EXPECT_EQ(run["compiles"], 15);
}

TEST(ImportReaders, NotALogExitsTwoWithAClearMessage) {
  TempDir dir;
  std::string path = dir.file("notes.txt");
  std::ofstream(path) << "hello\n";
  auto r = run_command(kBin + " import " + path + " --db " + dir.file("x.db"), true);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not a TORCH_TRACE log"), std::string::npos) << r.output;
}

TEST(ImportReaders, ReportCheckDiffExport) {
  TempDir dir;
  std::string a = dir.file("a.db"), b = dir.file("b.db");
  ASSERT_EQ(run_command(kBin + " import " + kBreaks + " --db " + a).exit_code, 0);
  ASSERT_EQ(run_command(kBin + " import " + kMlp + " --db " + b).exit_code, 0);

  auto report = run_command(kBin + " report " + a, true);
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("graph breaks 13 at 4 sites"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("make_traces.py:36"), std::string::npos) << report.output;

  std::string baseline = dir.file("baseline.json");
  auto update = run_command(kBin + " check " + a + " --baseline " + baseline + " --update-baseline", true);
  ASSERT_EQ(update.exit_code, 0) << update.output;
  for (const char* format : {"text", "github", "junit"}) {
    auto same = run_command(kBin + " check " + a + " --baseline " + baseline + " --format " + format, true);
    EXPECT_EQ(same.exit_code, 0) << format << ": " << same.output;
  }
  // The log itself, imported on the fly, against the same baseline.
  auto on_the_fly = run_command(kBin + " check " + kBreaks + " --baseline " + baseline, true);
  EXPECT_EQ(on_the_fly.exit_code, 0) << on_the_fly.output;
  // A run with fewer breaks passes; the breaks run against the mlp's baseline fails with its sites.
  std::string mlp_baseline = dir.file("mlp.json");
  ASSERT_EQ(run_command(kBin + " check " + b + " --baseline " + mlp_baseline + " --update-baseline").exit_code, 0);
  auto regress = run_command(kBin + " check " + a + " --baseline " + mlp_baseline + " --format github", true);
  EXPECT_EQ(regress.exit_code, 1) << regress.output;
  EXPECT_NE(regress.output.find("::error"), std::string::npos) << regress.output;
  auto junit = run_command(kBin + " check " + a + " --baseline " + mlp_baseline + " --format junit");
  EXPECT_NE(junit.output.find("<failure"), std::string::npos) << junit.output;

  auto diff = run_command(kBin + " diff " + b + " " + a, true);
  EXPECT_LE(diff.exit_code, 1) << diff.output;
  EXPECT_NE(diff.output.find("make_traces.py"), std::string::npos) << diff.output;

  std::string chrome = dir.file("trace.json");
  auto exported = run_command(kBin + " export " + a + " --chrome " + chrome, true);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  auto trace = nlohmann::json::parse(read_file(chrome));
  EXPECT_FALSE(trace["traceEvents"].empty());
}

// A log imported without a profiler trace has no calls: diff shows its call time as not recorded
// ("-"), not as 0 ns and -100%; a baseline written from a log imported on the fly does not name
// the temporary database it was read from (it is gone when check exits).
TEST(ImportReaders, NoCallsAndTemporaryImportAreSaidAsSuch) {
  TempDir dir;
  std::string db = dir.file("two.db");
  ASSERT_EQ(run_command(kBin + " import " + kMlp + " --kineto " + kFixtures + "/mlp_kineto_torch2.11_h100.json.gz --db " + db).exit_code, 0);
  ASSERT_EQ(run_command(kBin + " import " + kBreaks + " --db " + db).exit_code, 0);
  auto diff = run_command(kBin + " diff " + db + " " + db + " --run-a 1 --run-b 2", true);
  EXPECT_LE(diff.exit_code, 1) << diff.output;
  size_t row = diff.output.find("steady median/call");
  ASSERT_NE(row, std::string::npos) << diff.output;
  std::string line = diff.output.substr(row, diff.output.find('\n', row) - row);
  EXPECT_NE(line.find(" ms"), std::string::npos) << line;  // A: 3 region calls from the trace
  EXPECT_NE(line.find(" -"), std::string::npos) << line;
  EXPECT_EQ(line.find('%'), std::string::npos) << line;

  auto update = run_command(kBin + " check " + kMlp + " --baseline " + dir.file("b.json") + " --update-baseline", true);
  ASSERT_EQ(update.exit_code, 0) << update.output;
  EXPECT_EQ(update.output.find("tcprof-check-"), std::string::npos) << update.output;
  EXPECT_NE(update.output.find("temporary database"), std::string::npos) << update.output;
}

std::string gunzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(gz);
  return out;
}

// Two ranks where rank 1 never recompiled (its log ends before compile 0/1): report lists the
// divergence, check judges one rank or each.
TEST(ImportReaders, MultiRankDivergenceAndCheckRank) {
  TempDir dir;
  std::string log = gunzip(kMlp);
  size_t second = log.find("\"frame_compile_id\": 1");
  ASSERT_NE(second, std::string::npos);
  std::filesystem::create_directories(dir.file("tt"));
  std::ofstream(dir.file("tt/dedicated_log_torch_trace_rank_0_a.log")) << log;
  std::ofstream(dir.file("tt/dedicated_log_torch_trace_rank_1_b.log")) << log.substr(0, log.rfind('\n', second) + 1);
  std::string db = dir.file("ranks.db");
  auto imported = run_command(kBin + " import " + dir.file("tt") + " --db " + db + " --json");
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  auto j = nlohmann::json::parse(imported.output);
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["rank"], 0);
  EXPECT_EQ(j["runs"][1]["rank"], 1);
  EXPECT_EQ(j["runs"][1]["world_size"], 2);

  auto report = run_command(kBin + " report " + db, true);
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("Ranks diverge"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("compile 0/1: on rank 0 only; missing on 1"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("size mismatch"), std::string::npos) << report.output;  // the reason

  std::string baseline = dir.file("b.json");
  ASSERT_EQ(run_command(kBin + " check " + db + " --rank 1 --baseline " + baseline + " --update-baseline").exit_code, 0);
  EXPECT_EQ(run_command(kBin + " check " + db + " --rank 1 --baseline " + baseline).exit_code, 0);
  auto all = run_command(kBin + " check " + dir.file("tt") + " --rank all --baseline " + baseline, true);
  EXPECT_EQ(all.exit_code, 1) << all.output;  // rank 0 recompiled, rank 1's baseline has none
  EXPECT_NE(all.output.find("rank 0 (run"), std::string::npos) << all.output;
  EXPECT_NE(all.output.find("rank 1 (run"), std::string::npos) << all.output;
  EXPECT_EQ(run_command(kBin + " check " + db + " --rank 5 --baseline " + baseline).exit_code, 2);
}

}  // namespace
}  // namespace tcprof::testing
