// `tcprof report DB --kernels`: golden text (80 columns) and the JSON split.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/run_writer.h"
#include "samples/synthetic_run.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::replace_all;
using testing::run_command;
using testing::TempDir;

void expect_fits_80_columns(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    size_t columns = 0;
    for (unsigned char c : line) columns += (c & 0xC0) != 0x80;
    EXPECT_LE(columns, 80u) << line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

TEST(ReportKernels, TextMatchesGolden) {
  TempDir dir;
  std::string db = dir.file("run.db");
  write_synthetic_run(db, SyntheticRunOptions{});
  auto r = run_command("COLUMNS=80 " + std::string(TCPROF_BIN) + " report --kernels " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string actual = replace_all(r.output, db, "<DB>");
  expect_fits_80_columns(actual);
  std::string golden_path = std::string(TCPROF_GOLDEN_DIR) + "/report_kernels_synthetic.txt";
  if (std::getenv("TCPROF_UPDATE_GOLDEN")) {
    std::ofstream(golden_path) << actual;
    GTEST_SKIP() << "updated " << golden_path;
  }
  std::string expected = testing::read_file(golden_path);
  ASSERT_FALSE(expected.empty()) << "missing golden file " << golden_path;
  EXPECT_EQ(actual, expected) << "to accept: TCPROF_UPDATE_GOLDEN=1 ctest -R ReportKernels";
}

TEST(ReportKernels, SummaryRowsAndGuardsAppearInTheSplit) {
  TempDir dir;
  std::string db = dir.file("run.db");
  {
    RunInfo info;
    info.command = "run";
    RunWriter w(db, info);
    Id compile = w.next_id();
    w.record(CompileEvent{compile, 0, "0/0", "first call", 0, 10, "ok", false});
    Id graph = w.next_id();
    w.record(GraphEvent{graph, compile, 3, "", ""});
    Id call = w.next_id();
    w.record(CallEvent{call, 0, compile, 0, 1'000'000, "compiled", ""});
    KernelSummaryEvent s;
    s.call_id = call;
    s.graph_id = graph;
    s.name_id = w.intern("a_very_long_generated_kernel_name_that_goes_on_and_on_fused_add_mul_"
                         "relu_layer_norm");
    s.kind_id = w.intern("generated");
    s.device_id = w.intern("cpu");
    s.count = 10;
    s.total_ns = 600'000;
    s.min_ns = 50'000;
    s.max_ns = 70'000;
    s.sum_sq_ns2 = 10 * 60'000.0 * 60'000.0;
    w.record(s);
    KernelEvent guard;
    guard.call_id = call;
    guard.name_id = w.intern("guards");
    guard.kind_id = w.intern("guard");
    guard.device_id = w.intern("cpu");
    guard.duration_ns = 100'000;
    w.record(guard);
    w.record(CounterEvent{"cupti.dropped_records", 1234});
  }
  auto r = run_command("COLUMNS=80 " + std::string(TCPROF_BIN) + " report --kernels " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_fits_80_columns(r.output);
  EXPECT_NE(r.output.find("dispatch"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("compile"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("guard"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("CUPTI dropped 1,234 GPU activity records"), std::string::npos)
      << r.output;

  r = run_command("COLUMNS=80 " + std::string(TCPROF_BIN) + " report --kernels --json " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  const auto& k = j["runs"][0]["kernel_report"];
  EXPECT_EQ(k["kernels"][0]["instances"], 10);
  EXPECT_EQ(k["kernels"][0]["total_ns"], 600'000);
  EXPECT_EQ(k["call_time_ns"], 1'000'000);
  EXPECT_EQ(k["compile_in_calls_ns"], 10);  // the compile ran inside the call
  EXPECT_EQ(k["dispatch_ns"], 300'000 - 10);
  EXPECT_EQ(k["counters"]["cupti.dropped_records"], 1234);
  ASSERT_EQ(k["graph_kinds"].size(), 2u);
  EXPECT_EQ(k["graph_kinds"][0]["kind"], "guard");
  EXPECT_EQ(k["graph_kinds"][1]["kind"], "generated");
  EXPECT_EQ(k["graph_kinds"][1]["compile_id"], "0/0");
}

TEST(ReportKernels, LongModelPathsAreShortenedFromTheLeft) {
  TempDir dir;
  std::string db = dir.file("run.db");
  {
    RunInfo info;
    info.command = "run";
    info.model_path = "/very/long/path/to/some/deeply/nested/checkout/samples/models/gpt_tiny.pt";
    RunWriter w(db, info);
  }
  auto r = run_command("COLUMNS=80 " + std::string(TCPROF_BIN) + " report --kernels " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string text = replace_all(r.output, db, "<DB>");
  expect_fits_80_columns(text);
  EXPECT_NE(text.find("models/gpt_tiny.pt · "), std::string::npos) << text;
}

TEST(ReportKernels, PlainReportIsUnchangedWithoutTheFlag) {
  TempDir dir;
  std::string db = dir.file("run.db");
  write_synthetic_run(db, SyntheticRunOptions{});
  auto r = run_command("COLUMNS=80 " + std::string(TCPROF_BIN) + " report " + db);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.find("Time by graph and kind"), std::string::npos);
}

}  // namespace
}  // namespace tcprof
