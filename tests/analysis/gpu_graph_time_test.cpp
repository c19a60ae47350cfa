// A CUDA run's per-graph GPU time: busy time, copies each way with their bytes, the host's launch
// cost, the GPU's idle gaps inside a call, and the peak GPU memory over calls.
#include <gtest/gtest.h>

#include "analysis/gpu_graph_time.h"
#include "analysis/run_summary.h"
#include "core/run_writer.h"
#include "tests/test_support.h"

namespace tcprof::analysis {
namespace {

using testing::TempDir;

struct Work {
  Id call, graph;
  const char* name;
  const char* kind;
  int64_t start_ns, end_ns, bytes;
};

class GpuGraphTimes : public ::testing::Test {
 protected:
  Id write_full(const std::vector<Work>& work, const std::vector<int64_t>& call_peaks = {}) {
    RunInfo info;
    info.command = "run";
    info.device = "cuda:0";
    RunWriter w(db_, info);
    for (size_t i = 0; i < call_peaks.size(); ++i) {
      CallEvent c;
      c.id = static_cast<Id>(i + 1);
      c.start_ns = static_cast<int64_t>(i) * 10'000;
      c.duration_ns = 5'000;
      c.path = "eager";
      c.peak_gpu_bytes = call_peaks[i];
      w.record(c);
    }
    for (const auto& x : work) {
      KernelEvent e;
      e.call_id = x.call;
      e.graph_id = x.graph;
      e.name_id = w.intern(x.name);
      e.kind_id = w.intern(x.kind);
      e.device_id = w.intern(std::string(x.kind) == "eager" || std::string(x.kind).rfind("cuda_", 0) == 0 ? "cpu" : "cuda:0");
      e.start_ns = x.start_ns;
      e.duration_ns = x.end_ns - x.start_ns;
      e.bytes = x.bytes;
      w.record(e);
    }
    return w.run_id();
  }

  TempDir dir_;
  std::string db_ = dir_.file("gpu.db");
};

TEST_F(GpuGraphTimes, SplitAGraphsGpuTimeIntoKernelsCopiesLaunchesAndIdleGaps) {
  Id run = write_full({
      {1, 7, "gemm", "gpu", 0, 100, 0},
      {1, 7, "cudaLaunchKernel", "cuda_runtime", 10, 40, 0},
      {1, 7, "memcpy HtoD", "memcpy", 150, 200, 4096},  // 50 ns idle before it
      {1, 7, "aten::mm", "eager", 160, 400, 0},          // host time: not GPU work
      {1, 7, "relu", "gpu", 300, 400, 0},                // 100 ns idle before it
      {1, 7, "memcpy DtoH", "memcpy", 400, 420, 64},
      {2, 7, "gemm", "gpu", 1'000, 1'100, 0},            // next call: the gap between calls is not idle
      {2, 0, "fill", "memset", 1'200, 1'210, 128},        // outside any graph
      {2, 7, "cudaStreamSynchronize", "sync", 1'100, 1'900, 0},  // waiting, not launching
  });
  RunReader r(db_);
  auto graphs = gpu_graph_times(r, run);
  ASSERT_EQ(graphs.size(), 2u);
  EXPECT_EQ(graphs[0].graph_id, 0);  // outside graphs first
  EXPECT_EQ(graphs[0].kernels, 1);
  EXPECT_EQ(graphs[0].kernel_ns, 10);
  const GpuGraphTime& g = graphs[1];
  EXPECT_EQ(g.graph_id, 7);
  EXPECT_EQ(g.calls, 2);
  EXPECT_EQ(g.kernels, 3);
  EXPECT_EQ(g.kernel_ns, 300);
  EXPECT_EQ(g.htod.bytes, 4096);
  EXPECT_EQ(g.htod.ns, 50);
  EXPECT_EQ(g.htod.count, 1);
  EXPECT_EQ(g.dtoh.bytes, 64);
  EXPECT_EQ(g.dtoh.ns, 20);
  EXPECT_EQ(g.other_copies.count, 0);
  EXPECT_EQ(g.launch_ns, 30);
  EXPECT_EQ(g.idle_ns, 150);
  EXPECT_TRUE(g.idle_exact);
  EXPECT_EQ(g.gpu_ns(), 370);
}

TEST_F(GpuGraphTimes, OverlappingStreamsAreNotIdle) {
  Id run = write_full({
      {1, 3, "a", "gpu", 0, 500, 0},
      {1, 3, "b", "gpu", 100, 200, 0},  // inside a's span on another stream
      {1, 3, "c", "gpu", 400, 600, 0},
      {1, 3, "d", "gpu", 700, 800, 0},  // 100 ns after the latest end
  });
  RunReader r(db_);
  auto graphs = gpu_graph_times(r, run);
  ASSERT_EQ(graphs.size(), 1u);
  EXPECT_EQ(graphs[0].idle_ns, 100);
}

TEST_F(GpuGraphTimes, SummaryRowsGiveTheSpanLessBusyTime) {
  RunInfo info;
  info.command = "run";
  info.device = "cuda:0";
  Id run;
  {
    RunWriter w(db_, info);
    run = w.run_id();
    KernelSummaryEvent s;
    s.call_id = 1;
    s.graph_id = 5;
    s.name_id = w.intern("gemm");
    s.kind_id = w.intern("gpu");
    s.device_id = w.intern("cuda:0");
    s.start_ns = 1'000;
    s.end_ns = 2'000;
    s.count = 4;
    s.total_ns = 600;
    w.record(s);
    s.name_id = w.intern("memcpy HtoD");
    s.kind_id = w.intern("memcpy");
    s.start_ns = 1'100;
    s.end_ns = 1'200;
    s.count = 2;
    s.total_ns = 100;
    s.bytes = 1 << 20;
    w.record(s);
  }
  RunReader r(db_);
  auto graphs = gpu_graph_times(r, run);
  ASSERT_EQ(graphs.size(), 1u);
  EXPECT_EQ(graphs[0].kernels, 4);
  EXPECT_EQ(graphs[0].htod.bytes, 1 << 20);
  EXPECT_EQ(graphs[0].htod.count, 2);
  EXPECT_EQ(graphs[0].idle_ns, 300);  // span 1000, busy 700
  EXPECT_FALSE(graphs[0].idle_exact);
}

TEST_F(GpuGraphTimes, ACpuRunHasNoneAndNoPeak) {
  Id run = write_full({{1, 2, "fused_add", "generated", 0, 100, 0}}, {0, 0});
  RunReader r(db_);
  EXPECT_TRUE(gpu_graph_times(r, run).empty());
  EXPECT_EQ(summarize_run(r, run).peak_gpu_bytes, 0);
}

TEST_F(GpuGraphTimes, PeakGpuMemoryIsTheHighestCallPeak) {
  Id run = write_full({{1, 2, "k", "gpu", 0, 100, 0}}, {3 << 20, 9 << 20, 5 << 20});
  RunReader r(db_);
  auto calls = r.calls(run);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[1].peak_gpu_bytes, 9 << 20);
  EXPECT_EQ(peak_gpu_bytes(calls), 9 << 20);
  EXPECT_EQ(summarize_run(r, run).peak_gpu_bytes, 9 << 20);
}

}  // namespace
}  // namespace tcprof::analysis
