// Which calls of a summary run record GPU work (profiler/gpu_call_sampling.h), and how the report
// says so. The collector switches CUPTI on exactly where these answers change; the cost it saves
// is measured on a GPU (bench --recording-cost, docs/gpu.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/gpu_graph_time.h"
#include "core/error.h"
#include "profiler/gpu_call_sampling.h"
#include "samples/synthetic_run.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

std::vector<int64_t> recorded_calls(GpuCallSampling& sampling, int64_t calls) {
  std::vector<int64_t> recorded;
  for (int64_t k = 1; k <= calls; ++k) {
    const bool predicted = sampling.next_call_recorded();  // what the collector switches on ahead for
    const bool answer = sampling.call_begin(1000 + 7 * k);   // call ids need not be consecutive
    EXPECT_EQ(predicted, answer) << "call " << k;
    if (answer) recorded.push_back(k);
  }
  return recorded;
}

TEST(GpuCallSampling, SummaryRecordsTheFirstCallsThenOneInTwenty) {
  GpuCallSampling sampling(gpu_sampling_policy(ProfileMode::Summary, nullptr));
  std::vector<int64_t> expected = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 30, 50, 70, 90};
  EXPECT_EQ(recorded_calls(sampling, 100), expected);
  EXPECT_EQ(sampling.calls_recorded(), 14);
  EXPECT_EQ(sampling.calls_skipped(), 86);
}

TEST(GpuCallSampling, FullAndEveryOneRecordEveryCall) {
  GpuCallSampling full(gpu_sampling_policy(ProfileMode::Full, "7"));  // the variable is summary's only
  EXPECT_EQ(recorded_calls(full, 40).size(), 40u);
  EXPECT_EQ(full.calls_skipped(), 0);
  GpuCallSampling every(gpu_sampling_policy(ProfileMode::Summary, "1"));
  EXPECT_EQ(recorded_calls(every, 40).size(), 40u);
  GpuCallSampling five(gpu_sampling_policy(ProfileMode::Summary, "5"));
  std::vector<int64_t> expected = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20};
  EXPECT_EQ(recorded_calls(five, 22), expected);
}

TEST(GpuCallSampling, ABadEveryIsAUsageErrorNamingTheVariable) {
  for (const char* bad : {"0", "-3", "x", "5x", "2.5", " 4"}) {
    try {
      gpu_sampling_policy(ProfileMode::Summary, bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      EXPECT_NE(std::string(e.what()).find("TCPROF_SUMMARY_GPU_EVERY"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("unset it"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(gpu_sampling_policy(ProfileMode::Summary, "").every, 20);
}

// A training step reopens its forward's call for the backward and the optimizer step: one call,
// one answer, counted once.
TEST(GpuCallSampling, AReopenedCallKeepsItsAnswer) {
  GpuCallSampling sampling({/*first_calls=*/1, /*every=*/3});
  EXPECT_TRUE(sampling.call_begin(11));
  EXPECT_TRUE(sampling.call_begin(11));
  EXPECT_FALSE(sampling.call_begin(12));
  EXPECT_FALSE(sampling.call_begin(12));
  EXPECT_FALSE(sampling.call_begin(13));
  EXPECT_TRUE(sampling.call_begin(14));
  EXPECT_TRUE(sampling.call_begin(14));
  EXPECT_EQ(sampling.calls_recorded(), 2);
  EXPECT_EQ(sampling.calls_skipped(), 2);
}

// A recompile's new graph is recorded in the first call that launches it, even when that call was
// not sampled: a graph that runs a few times between samples would otherwise have no GPU rows.
TEST(GpuCallSampling, AGraphNeverRecordedTurnsItsCallOn) {
  GpuCallSampling sampling({/*first_calls=*/1, /*every=*/100});
  ASSERT_TRUE(sampling.call_begin(1));
  sampling.graph_recorded(500);
  ASSERT_FALSE(sampling.call_begin(2));
  EXPECT_FALSE(sampling.records_new_graph(500)) << "recorded in call 1";
  EXPECT_TRUE(sampling.records_new_graph(501)) << "a graph no call recorded";
  EXPECT_FALSE(sampling.records_new_graph(502)) << "the call is recorded already";
  EXPECT_EQ(sampling.calls_recorded(), 2);
  EXPECT_EQ(sampling.calls_skipped(), 0);
  EXPECT_TRUE(sampling.call_begin(2)) << "the reopened call is recorded now";
  sampling.graph_recorded(501);
  ASSERT_FALSE(sampling.call_begin(3));
  EXPECT_FALSE(sampling.records_new_graph(501));
  EXPECT_EQ(sampling.calls_skipped(), 1);
}

TEST(GpuCallSampling, CoverageIsReadFromTheCollectorsCounters) {
  // Two collectors over one run (bench's blocks) each write their share.
  auto c = analysis::gpu_call_coverage({{"cupti.calls_recorded", 12}, {"cupti.calls_skipped", 80},
                                        {"cupti.calls_recorded", 2}, {"cupti.calls_skipped", 6},
                                        {"cupti.dropped_records", 3}});
  EXPECT_EQ(c.recorded, 14);
  EXPECT_EQ(c.skipped, 86);
  EXPECT_TRUE(c.sampled());
  EXPECT_NE(c.text().find("GPU work recorded on 14 of 100 calls"), std::string::npos) << c.text();
  EXPECT_NE(c.text().find("--profile full records every call"), std::string::npos) << c.text();
  EXPECT_FALSE(analysis::gpu_call_coverage({{"cupti.calls_recorded", 10}, {"cupti.calls_skipped", 0}}).sampled());
  EXPECT_TRUE(analysis::gpu_call_coverage({}).text().empty()) << "an older run: every call recorded";
}

TEST(GpuCallSampling, ReportSaysHowManyCallsTheGpuRowsCover) {
  testing::TempDir dir;
  const std::string db = dir.file("run.db");
  write_sampled_gpu_run(db, 14, 86);
  auto r = testing::run_command("COLUMNS=80 " + std::string(TCPROF_BIN) + " report --kernels " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("GPU work recorded on 14 of 100 calls"), std::string::npos) << r.output;
  r = testing::run_command(std::string(TCPROF_BIN) + " report --kernels --json " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto gpu = nlohmann::json::parse(r.output)["runs"][0]["kernel_report"]["gpu_calls"];
  EXPECT_EQ(gpu["recorded"], 14);
  EXPECT_EQ(gpu["skipped"], 86);
  EXPECT_EQ(gpu["sampled"], true);
}

}  // namespace
}  // namespace tcprof
