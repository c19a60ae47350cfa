// What a user reads about a real CUDA run (the H200 databases in tests/fixtures/gpu_runs): kernel
// statistics and the biggest problems rank GPU work, never a CUDA API call, under readable names.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/gpu_graph_time.h"
#include "analysis/kernel_stats.h"
#include "analysis/problems.h"
#include "core/kernel_name.h"
#include "tests/test_support.h"

namespace tcprof::analysis {
namespace {

using testing::TempDir;

const std::string kGpuRuns = TCPROF_GPU_RUNS;

TEST(GpuRuns, KernelStatisticsShowDemangledNames) {
  TempDir dir;
  RunReader reader(testing::gunzip_into(kGpuRuns + "/resnet18_full_h200.db.gz", dir));
  const Id run = reader.runs().front().id;
  const auto stats = kernel_stats(reader, run);
  ASSERT_FALSE(stats.empty());
  int cuda_kernels = 0;
  for (const KernelStats& k : stats) {
    EXPECT_FALSE(looks_mangled(k.name)) << k.name;
    if (k.kind == "gpu" && k.name.rfind("void ", 0) == 0) ++cuda_kernels;
  }
  EXPECT_GT(cuda_kernels, 5);
}

TEST(GpuRuns, NoCudaApiCallIsAKernelProblem) {
  // On the GPT run the GUI's overview once named cuLibraryLoadData, a driver call on the host, the
  // "slowest kernel".
  TempDir dir;
  const std::string resnet = testing::gunzip_into(kGpuRuns + "/resnet18_full_h200.db.gz", dir);
  const std::pair<std::string, std::string> runs[] = {
      {kGpuRuns + "/gpt_summary_h200.db", "Slowest GPU kernel: sm80_xmma_gemm_"},
      // 61% of ResNet18's recorded GPU time is the host-to-device copy of its input, made before
      // each call: no call's work, so the slowest of the model's own is named.
      {resnet, "Slowest GPU kernel: cudnn::bn_fw_inf_1C11_kernel_NCHW"}};
  for (const auto& [db, expected] : runs) {
    RunReader reader(db);
    const auto problems = find_problems(reader, reader.runs().front().id, 10);
    int kernel_problems = 0;
    for (const Problem& p : problems) {
      EXPECT_EQ(p.title.find("cuLibraryLoadData"), std::string::npos) << p.title;
      EXPECT_EQ(p.title.find("_Z"), std::string::npos) << p.title;
      if (p.kind != "slowest_kernel") continue;
      ++kernel_problems;
      EXPECT_NE(p.title.find(expected), std::string::npos) << p.title;
      EXPECT_NE(p.title.find("of GPU time"), std::string::npos) << p.title;
    }
    EXPECT_EQ(kernel_problems, 1) << db;
  }
}

TEST(GpuRuns, InputCopiesBeforeEachCallAreShownApartFromTheModelsWork) {
  // ResNet18 at batch 32: `run` copied each call's 19 MB input to the GPU before the call. Those
  // copies are GPU work outside every call: their own place, never the model's GPU time.
  TempDir dir;
  RunReader reader(testing::gunzip_into(kGpuRuns + "/resnet18_full_h200.db.gz", dir));
  const auto stats = kernel_stats(reader, reader.runs().front().id);
  const auto outside = stats_of_place(stats, KernelPlace::OutsideCalls);
  ASSERT_FALSE(outside.empty());
  EXPECT_EQ(outside.front().name, "memcpy HtoD");
  EXPECT_EQ(outside.front().instances, 20);  // one per call
  EXPECT_NEAR(static_cast<double>(outside.front().total_ns) / 1e6, 57.3, 0.1);
  for (const KernelStats& k : stats_of_place(stats, KernelPlace::Gpu)) EXPECT_NE(k.name, "memcpy HtoD");
  // Nor in any graph's GPU time.
  for (const auto& g : gpu_graph_times(reader, reader.runs().front().id)) EXPECT_EQ(g.htod.count, 0) << g.graph_id;
}

TEST(GpuRuns, ALaunchBoundRunSaysSo) {
  // ResNet18 with --profile full: each steady call spends ~29% of its time in CUDA runtime calls
  // while the GPU is busy ~36% of it.
  TempDir dir;
  RunReader reader(testing::gunzip_into(kGpuRuns + "/resnet18_full_h200.db.gz", dir));
  const Id run = reader.runs().front().id;
  const LaunchPressure l = launch_pressure(reader.calls(run), reader.compiles(run), reader.call_kind_times(run));
  EXPECT_EQ(l.calls, 19);  // the first call compiled
  EXPECT_NEAR(l.api_share(), 0.29, 0.03);
  EXPECT_NEAR(l.gpu_share(), 0.36, 0.03);
  EXPECT_TRUE(l.launch_bound());
  const auto problems = find_problems(reader, run, 10);
  auto it = std::find_if(problems.begin(), problems.end(), [](const Problem& p) { return p.kind == "launch_bound"; });
  ASSERT_NE(it, problems.end());
  EXPECT_NE(it->title.find("the host spends 29% of each call in CUDA API calls"), std::string::npos) << it->title;
  EXPECT_EQ(it->view, "kernels");
}

TEST(GpuRuns, AGpuBoundRunIsNotLaunchBound) {
  // The GPT with --profile summary: the GPU is busy most of each call.
  RunReader reader(kGpuRuns + "/gpt_summary_h200.db");
  const Id run = reader.runs().front().id;
  const LaunchPressure l = launch_pressure(reader.calls(run), reader.compiles(run), reader.call_kind_times(run));
  EXPECT_GT(l.calls, 90);
  EXPECT_GT(l.gpu_share(), 0.75);
  EXPECT_FALSE(l.launch_bound());
}

TEST(GpuRuns, ACallWithoutGpuWorkCountsForNothing) {
  std::vector<CallRow> calls(2);
  calls[0].id = 1;
  calls[0].duration_ns = 1000;
  calls[1].id = 2;
  calls[1].duration_ns = 1000;
  const std::vector<CallKindTime> times = {{1, "cuda_runtime", 10, 600}, {1, "cuda_driver", 20, 700},
                                           {1, "gpu", 10, 200}, {2, "eager", 1, 900}};
  const LaunchPressure l = launch_pressure(calls, {}, times);
  EXPECT_EQ(l.calls, 1);
  EXPECT_EQ(l.api_ns, 700);  // the larger of runtime and driver time: they nest
  EXPECT_EQ(l.gpu_ns, 200);
  EXPECT_TRUE(l.launch_bound());
}

}  // namespace
}  // namespace tcprof::analysis
