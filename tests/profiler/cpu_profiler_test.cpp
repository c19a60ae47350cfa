// CpuProfiler in each mode, recorded through a real RunWriter and read back with RunReader.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "analysis/kernel_stats.h"
#include "core/run_reader.h"
#include "core/run_writer.h"
#include "profiler/cpu_profiler.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::TempDir;

RunInfo info() {
  RunInfo i;
  i.command = "test";
  return i;
}

// Two calls; in each: mm x3 (10, 20, 30 us) and gelu x2 (5, 7 us) in graph g, and mm once more
// from a second graph g2 (40 us).
void launch_pattern(CpuProfiler& p, RunWriter& w, Id g, Id g2) {
  KernelKey mm = p.key("mm", "extern");
  KernelKey gelu = p.key("fused_gelu", "generated");
  int64_t t = 1'000'000;
  for (int call = 0; call < 2; ++call) {
    p.begin_call(w.next_id());
    for (int64_t d : {10'000, 20'000, 30'000}) p.record(mm, g, t, d), t += d;
    for (int64_t d : {5'000, 7'000}) p.record(gelu, g, t, d), t += d;
    p.record(mm, g2, t, 40'000);
    t += 40'000;
    p.end_call();
  }
}

TEST(CpuProfiler, OffRecordsNothing) {
  TempDir dir;
  std::string db = dir.file("off.db");
  {
    RunWriter w(db, info());
    CpuProfiler p(&w, ProfileMode::Off);
    EXPECT_FALSE(p.enabled());
    launch_pattern(p, w, w.next_id(), w.next_id());
    { auto scope = p.time(p.key("x", "eager"), 0); }
  }
  RunReader r(db);
  Id run = r.runs().at(0).id;
  EXPECT_EQ(r.counts(run).kernels, 0);
  EXPECT_TRUE(r.kernel_summaries(run).empty());
  EXPECT_TRUE(analysis::kernel_stats(r, run).empty());
}

TEST(CpuProfiler, NullWriterIsOff) {
  CpuProfiler p(nullptr, ProfileMode::Full);
  EXPECT_FALSE(p.enabled());
  KernelKey k = p.key("mm", "extern");
  p.begin_call(1);
  p.record(k, 0, 0, 10);
  { auto scope = p.time(k, 0); }
  p.end_call();
}

TEST(CpuProfiler, FullRecordsEveryLaunchWithItsCall) {
  TempDir dir;
  std::string db = dir.file("full.db");
  Id g, g2;
  {
    RunWriter w(db, info());
    g = w.next_id();
    g2 = w.next_id();
    CpuProfiler p(&w, ProfileMode::Full, 3);
    launch_pattern(p, w, g, g2);
  }
  RunReader r(db);
  Id run = r.runs().at(0).id;
  std::vector<KernelRow> rows;
  r.for_each_kernel(run, [&](const KernelRow& k) { rows.push_back(k); });
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(rows[0].name, "mm");
  EXPECT_EQ(rows[0].kind, "extern");
  EXPECT_EQ(rows[0].device, "cpu");
  EXPECT_EQ(rows[0].stream, 3);
  EXPECT_EQ(rows[0].graph_id, g);
  EXPECT_EQ(rows[0].duration_ns, 10'000);
  EXPECT_EQ(rows[5].graph_id, g2);
  EXPECT_NE(rows[0].call_id, 0);
  EXPECT_NE(rows[0].call_id, rows[6].call_id);
  auto stats = analysis::kernel_stats(r, run);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].name, "mm");
  EXPECT_EQ(stats[0].instances, 8);
  EXPECT_EQ(stats[0].total_ns, 200'000);
  EXPECT_EQ(stats[0].min_ns, 10'000);
  EXPECT_EQ(stats[0].max_ns, 40'000);
}

TEST(CpuProfiler, SummaryFoldsEachNameAndGraphPerCall) {
  TempDir dir;
  std::string db = dir.file("summary.db");
  Id g, g2;
  {
    RunWriter w(db, info());
    g = w.next_id();
    g2 = w.next_id();
    CpuProfiler p(&w, ProfileMode::Summary);
    launch_pattern(p, w, g, g2);
  }
  RunReader r(db);
  Id run = r.runs().at(0).id;
  EXPECT_EQ(r.counts(run).kernel_rows, 0);  // no per-launch rows
  auto rows = r.kernel_summaries(run);
  ASSERT_EQ(rows.size(), 6u);  // per call: mm@g, gelu@g, mm@g2
  const KernelSummaryRow* mm = nullptr;
  for (const auto& s : rows) {
    if (s.name == "mm" && s.graph_id == g && !mm) mm = &s;
  }
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->kind, "extern");
  EXPECT_EQ(mm->count, 3);
  EXPECT_EQ(mm->total_ns, 60'000);
  EXPECT_EQ(mm->min_ns, 10'000);
  EXPECT_EQ(mm->max_ns, 30'000);
  EXPECT_EQ(mm->start_ns, 1'000'000);
  EXPECT_EQ(mm->end_ns, 1'060'000);
  EXPECT_DOUBLE_EQ(mm->sum_sq_ns2, 1e8 + 4e8 + 9e8);
  EXPECT_NE(mm->call_id, 0);

  // Aggregates read the same as full mode's, except the median (launch-level data is gone).
  auto stats = analysis::kernel_stats(r, run);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].name, "mm");
  EXPECT_EQ(stats[0].instances, 8);
  EXPECT_EQ(stats[0].total_ns, 200'000);
  EXPECT_EQ(stats[0].min_ns, 10'000);
  EXPECT_EQ(stats[0].max_ns, 40'000);
  EXPECT_DOUBLE_EQ(stats[0].avg_ns, 25'000);
  EXPECT_EQ(stats[1].name, "fused_gelu");
  EXPECT_EQ(stats[1].instances, 4);
  EXPECT_NEAR(stats[1].stddev_ns, 1154.7, 0.1);  // 5,7,5,7 us: exact via sum of squares
}

TEST(CpuProfiler, ScopeTimesTheEnclosedWork) {
  TempDir dir;
  std::string db = dir.file("scope.db");
  {
    RunWriter w(db, info());
    CpuProfiler p(&w, ProfileMode::Full);
    KernelKey k = p.key("guard_eval", "guard");
    p.begin_call(w.next_id());
    {
      auto scope = p.time(k, 0);
      volatile unsigned sink = 0;  // unsigned: the sum wraps (UBSan: an int overflowed here)
      for (unsigned i = 0; i < 100000; ++i) sink = sink + i;
    }
    p.end_call();
  }
  RunReader r(db);
  std::vector<KernelRow> rows;
  r.for_each_kernel(r.runs().at(0).id, [&](const KernelRow& k) { rows.push_back(k); });
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kind, "guard");
  EXPECT_GT(rows[0].duration_ns, 0);
}

// The CUPTI collector learns each launch's call and graph from here: every timed scope is
// announced with them, and each call's start and end, so GPU kernels are attributed like the CPU
// time and work between launches (a compile's capture run) still belongs to its call.
TEST(CpuProfiler, LaunchesAndCallEndsAreAnnouncedToTheObserver) {
  struct Recorder : LaunchObserver {
    std::vector<std::string> seen;
    void call_begin(Id call) override { seen.push_back(fmt::format("call_begin {}", call)); }
    void call_scope_end() override { seen.push_back("call_scope_end"); }
    void launch_begin(Id call, Id graph) override { seen.push_back(fmt::format("begin {} {}", call, graph)); }
    void launch_end() override { seen.push_back("end"); }
    void call_end() override { seen.push_back("call_end"); }
  } observer;
  TempDir dir;
  RunWriter w(dir.file("observer.db"), info());
  for (ProfileMode mode : {ProfileMode::Full, ProfileMode::Summary, ProfileMode::Off}) {
    observer.seen.clear();
    CpuProfiler p(&w, mode);
    p.set_launch_observer(&observer);
    KernelKey k = p.key("aten::mm", "eager");
    p.begin_call(7);
    { auto a = p.time(k, 3); }
    { auto b = p.time(k, 4); }
    p.end_call_scope();
    p.end_call();
    p.end_call();  // a second close of the same window announces nothing
    if (mode == ProfileMode::Off) {
      EXPECT_TRUE(observer.seen.empty());  // --profile off starts no collector and times nothing
    } else {
      EXPECT_EQ(observer.seen,
                (std::vector<std::string>{"call_begin 7", "begin 7 3", "end", "begin 7 4", "end", "call_scope_end",
                                          "call_end"}));
    }
  }
}

TEST(CpuProfiler, WindowLeftOpenIsWrittenAtDestruction) {
  TempDir dir;
  std::string db = dir.file("open.db");
  {
    RunWriter w(db, info());
    CpuProfiler p(&w, ProfileMode::Summary);
    p.begin_call(w.next_id());
    p.record(p.key("mm", "extern"), 0, 100, 10);
  }
  RunReader r(db);
  auto rows = r.kernel_summaries(r.runs().at(0).id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].count, 1);
}

TEST(CpuProfiler, OnePerThreadSharingOneWriter) {
  TempDir dir;
  std::string db = dir.file("threads.db");
  {
    RunWriter w(db, info());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&w, t] {
        CpuProfiler p(&w, t % 2 ? ProfileMode::Full : ProfileMode::Summary, t);
        KernelKey k = p.key("k" + std::to_string(t), "generated");
        for (int call = 0; call < 50; ++call) {
          p.begin_call(w.next_id());
          for (int i = 0; i < 20; ++i) p.record(k, 0, call * 100 + i, 1 + i);
          p.end_call();
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  RunReader r(db);
  Id run = r.runs().at(0).id;
  EXPECT_EQ(r.counts(run).kernel_rows, 2 * 50 * 20);   // threads 1 and 3: full
  EXPECT_EQ(r.kernel_summaries(run).size(), 2u * 50);  // threads 0 and 2: one row per call
  auto stats = analysis::kernel_stats(r, run);
  ASSERT_EQ(stats.size(), 4u);
  for (const auto& s : stats) EXPECT_EQ(s.instances, 1000) << s.name;
}

}  // namespace
}  // namespace tcprof
