// Kernel statistics: nsys's columns, one grouping (name and device), folded summary rows, ranges.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/kernel_stats.h"
#include "analysis/statistics.h"
#include "core/run_writer.h"
#include "tests/test_support.h"

namespace tcprof::analysis {
namespace {

using testing::TempDir;

struct Launch {
  const char* name;
  const char* device;
  int64_t start_ns, duration_ns;
};

Id write_run(const std::string& db, const std::vector<Launch>& launches) {
  RunInfo info;
  info.command = "test";
  RunWriter w(db, info);
  for (const auto& l : launches) {
    KernelEvent e;
    e.name_id = w.intern(l.name);
    e.kind_id = w.intern("generated");
    e.device_id = w.intern(l.device);
    e.start_ns = l.start_ns;
    e.duration_ns = l.duration_ns;
    w.record(e);
  }
  return w.run_id();
}

TEST(KernelStats, MatchNsysColumns) {
  TempDir dir;
  std::string db = dir.file("k.db");
  Id run = write_run(db, {{"a", "cpu", 100, 10}, {"a", "cpu", 200, 20}, {"a", "cpu", 300, 30}, {"a", "cpu", 400, 40},
                          {"b", "cpu", 500, 300}, {"b", "cpu", 600, 100}, {"b", "cpu", 700, 200}});
  RunReader r(db);
  auto stats = kernel_stats(r, run);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].name, "b");  // largest total first
  EXPECT_EQ(stats[0].instances, 3);
  EXPECT_EQ(stats[0].total_ns, 600);
  EXPECT_DOUBLE_EQ(stats[0].median_ns, 200);
  EXPECT_DOUBLE_EQ(stats[0].stddev_ns, 100);  // sample standard deviation
  EXPECT_NEAR(stats[0].time_percent, 100.0 * 600 / 700, 1e-9);
  EXPECT_EQ(stats[1].name, "a");
  EXPECT_DOUBLE_EQ(stats[1].median_ns, 25);  // even count: mean of the middle two
  EXPECT_EQ(stats[1].min_ns, 10);
  EXPECT_EQ(stats[1].max_ns, 40);
  EXPECT_DOUBLE_EQ(stats[1].avg_ns, 25);

  // A time range restricts the kernels aggregated: starts at 100..400 are "a", 500.. are "b".
  auto only_a = kernel_stats(r, run, TimeRange{0, 450});
  ASSERT_EQ(only_a.size(), 1u);
  EXPECT_EQ(only_a[0].name, "a");
  EXPECT_DOUBLE_EQ(only_a[0].time_percent, 100);
}

TEST(KernelStats, OneKernelNameOnTwoDevicesIsTwoRows) {
  TempDir dir;
  std::string db = dir.file("d.db");
  Id run = write_run(db, {{"gemm", "cpu", 100, 50}, {"gemm", "cuda:0", 200, 5}, {"gemm", "cuda:0", 300, 7}});
  RunReader r(db);
  auto stats = kernel_stats(r, run);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].device, "cpu");
  EXPECT_EQ(stats[0].instances, 1);
  EXPECT_EQ(stats[1].device, "cuda:0");
  EXPECT_EQ(stats[1].instances, 2);
  EXPECT_DOUBLE_EQ(stats[1].median_ns, 6);
}

TEST(KernelStats, FoldedRowsCountAsTheirLaunches) {
  KernelStatsBuilder b;
  size_t g = b.group("fused_add", "generated", "cpu");
  b.add(g, 10);
  b.add_folded(g, 9, 180, 15, 30, 9 * 400.0);  // nine launches of mean 20
  auto stats = b.finish();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].instances, 10);
  EXPECT_EQ(stats[0].total_ns, 190);
  EXPECT_EQ(stats[0].min_ns, 10);
  EXPECT_EQ(stats[0].max_ns, 30);
  EXPECT_DOUBLE_EQ(stats[0].median_ns, 20);
  EXPECT_NEAR(stats[0].stddev_ns, std::sqrt((100 + 3600 - 10 * 19.0 * 19.0) / 9), 1e-9);
}

TEST(Statistics, MedianAndWeightedMedian) {
  EXPECT_DOUBLE_EQ(median({}), 0);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(weighted_median({}), 0);
  EXPECT_DOUBLE_EQ(weighted_median({{5, 1}}), 5);
  EXPECT_DOUBLE_EQ(weighted_median({{1, 1}, {9, 1}}), 5);
  EXPECT_DOUBLE_EQ(weighted_median({{1, 3}, {9, 1}}), 1);
  EXPECT_DOUBLE_EQ(weighted_median({{9, 2}, {1, 2}}), 5);
}

}  // namespace
}  // namespace tcprof::analysis
