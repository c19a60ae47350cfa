// Loading libcupti at run time: a clear "unavailable" when it cannot be loaded, and the real
// toolkit library (present on build machines, even without a GPU) loads completely.
#include <gtest/gtest.h>

#include "core/clock.h"
#include "core/run_writer.h"
#include "profiler/cupti_collector.h"
#include "profiler/cupti_loader.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

TEST(CuptiLoader, MissingLibraryIsReportedAsUnavailable) {
  auto r = load_cupti({"/nonexistent/libcupti.so"});
  EXPECT_FALSE(r.available());
  EXPECT_NE(r.error.find("GPU collection unavailable"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("/nonexistent/libcupti.so"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << "one line";
}

TEST(CuptiLoader, LibraryWithoutCuptiSymbolsIsRejected) {
  auto r = load_cupti({"libm.so.6"});
  EXPECT_FALSE(r.available());
  EXPECT_NE(r.error.find("has no cupti"), std::string::npos) << r.error;
}

TEST(CuptiLoader, EnvironmentVariableComesFirst) {
  setenv("TCPROF_CUPTI_LIBRARY", "/opt/x/libcupti.so", 1);
  auto paths = default_cupti_paths();
  unsetenv("TCPROF_CUPTI_LIBRARY");
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths[0], "/opt/x/libcupti.so");
}

TEST(CuptiLoader, ToolkitLibraryLoadsEveryEntryPoint) {
  auto r = load_cupti({TCPROF_TOOLKIT_CUPTI});
  ASSERT_TRUE(r.available()) << r.error;
  EXPECT_EQ(r.api->library_path, TCPROF_TOOLKIT_CUPTI);
  EXPECT_EQ(r.api->error_text(CUPTI_SUCCESS), "CUPTI_SUCCESS");
}

TEST(CuptiLoader, ClockOffsetPutsCuptiTimestampsOnTheHostClock) {
  auto r = load_cupti({TCPROF_TOOLKIT_CUPTI});
  ASSERT_TRUE(r.available()) << r.error;
  int64_t offset = measure_cupti_clock_offset(*r.api);
  uint64_t cupti_now = 0;
  ASSERT_EQ(r.api->get_timestamp(&cupti_now), CUPTI_SUCCESS);
  int64_t host = now_ns();
  EXPECT_LT(std::llabs(host - (static_cast<int64_t>(cupti_now) + offset)), 5'000'000);
}

TEST(CuptiCollector, UnavailableWithoutLibraryAndTheRunGoesOn) {
  testing::TempDir dir;
  RunInfo info;
  info.command = "test";
  RunWriter w(dir.file("run.db"), info);
  CuptiCollector::Options o;
  o.library_paths = {"/nonexistent/libcupti.so"};
  std::string error;
  auto c = CuptiCollector::start(w, o, &error);
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(error.find("GPU collection unavailable"), std::string::npos) << error;
  // A null collector's launch scope is a no-op, so instrumented code needs no branches.
  { CuptiCollector::LaunchScopeGuard scope(nullptr, 1, 2); }
}

TEST(CuptiCollector, NoGpuIsReportedClearly) {
  testing::TempDir dir;
  RunInfo info;
  info.command = "test";
  RunWriter w(dir.file("run.db"), info);
  CuptiCollector::Options o;
  o.library_paths = {TCPROF_TOOLKIT_CUPTI};
  std::string error;
  auto c = CuptiCollector::start(w, o, &error);
  if (c) GTEST_SKIP() << "a GPU is present: collection started";
  EXPECT_NE(error.find("GPU collection unavailable"), std::string::npos) << error;
}

}  // namespace
}  // namespace tcprof
