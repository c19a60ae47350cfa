// Launch sizes tuned per kernel (launch_tuning.h): which sizes are tried, how the race decides on
// the device's clock, what is remembered in memory and beside the kernel cache, and the whole path
// through the cuda backend in emulation, where the tuned program must give eager's answer.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include "compiler/backends/cuda/launch_tuning.h"
#include "core/error.h"
#include "core/log.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

namespace fs = std::filesystem;
using testing::expect_same_output;
using testing::inputs_for;
using testing::sample;

CudaKernelSymbol kernel(const char* symbol, int inputs, int rank, bool row) {
  CudaKernelSymbol k;
  k.symbol = symbol;
  k.inputs = inputs;
  k.outputs = 1;
  k.rank = rank;
  k.row = row;
  return k;
}
CudaKernelSymbol pointwise_kernel() { return kernel("tcu_pointwise", 2, 1, false); }
CudaKernelSymbol row_kernel() { return kernel("tcu_rows", 1, 2, true); }

// A device whose launches take `per_launch[block]` ns (1,000 for blocks not named); counts timings.
struct FakeDevice {
  std::map<unsigned, int64_t> per_launch;
  std::vector<unsigned> refused;
  bool ready = true;
  int timings = 0;
  LaunchClock clock() {
    return LaunchClock{[this] { return ready; },
                       [this](const LaunchShape& s, int n) -> std::optional<int64_t> {
                         ++timings;
                         for (unsigned b : refused) {
                           if (b == s.block) return std::nullopt;
                         }
                         auto it = per_launch.find(s.block);
                         return n * (it == per_launch.end() ? 1000 : it->second);
                       }};
  }
};

const int64_t kBig[] = {4 << 20};
const int64_t kBigStrides[] = {1, 1};

TEST(LaunchTuning, OnlySizesThatCannotChangeAResultAreTried) {
  const LaunchLimits limits;
  std::vector<LaunchShape> c = launch_candidates(pointwise_kernel(), kBig, limits);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].block, launch_shape(pointwise_kernel(), kBig, limits).block) << "the default first";
  EXPECT_EQ(c[0].block, 256u);
  EXPECT_EQ(c[1].block, 128u);
  EXPECT_EQ(c[1].grid, 8192u) << "the grid follows the block";
  EXPECT_EQ(c[3].block, 1024u);
  const int64_t tiny[] = {1000};
  EXPECT_EQ(launch_candidates(pointwise_kernel(), tiny, limits).size(), 1u) << "one block holds it all";
  // A warp a row: 2 to 32 rows a block.
  const int64_t rows[] = {4096, 768};
  c = launch_candidates(row_kernel(), rows, limits);
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[0].block, 256u);
  EXPECT_EQ(c[1].block, 64u);
  EXPECT_EQ(c[1].grid, 2048u);
  // A row the whole block reduces: its block orders the sum, so it keeps it.
  const int64_t long_rows[] = {4096, 5000};
  EXPECT_EQ(launch_candidates(row_kernel(), long_rows, limits).size(), 1u);
}

TEST(LaunchTuning, TheFastestBlockWinsByTheMarginAndIsTimedOnce) {
  LaunchTuner tuner("test device", "");
  FakeDevice dev;
  dev.per_launch = {{512, 700}};
  const LaunchShape s = tuner.choose(pointwise_kernel(), kBig, kBigStrides, 0xf, LaunchLimits{}, dev.clock()).shape;
  EXPECT_EQ(s.block, 512u);
  EXPECT_EQ(s.grid, 2048u);
  const int timed = dev.timings;
  EXPECT_GT(timed, 4) << "an untimed run and rounds for each of four blocks";
  EXPECT_EQ(tuner.choose(pointwise_kernel(), kBig, kBigStrides, 0xf, LaunchLimits{}, dev.clock()).shape.block, 512u);
  EXPECT_EQ(dev.timings, timed) << "the second launch over the same space is not timed again";
  const std::vector<LaunchDecision> d = tuner.decisions();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].entries[2].best_ns, 700) << "time per launch";
  EXPECT_EQ(d[0].entries[0].best_ns, 1000);
  const std::string text = launch_decision_text(d[0]);
  EXPECT_NE(text.find("tcu_pointwise[4194304]: block 512 (grid 2048) 0.7 us"), std::string::npos) << text;
  EXPECT_NE(text.find("30% faster than the default"), std::string::npos) << text;
  // Another index space is another decision.
  const int64_t other[] = {1 << 20};
  tuner.choose(pointwise_kernel(), other, kBigStrides, 0xf, LaunchLimits{}, dev.clock());
  EXPECT_GT(dev.timings, timed);
  EXPECT_EQ(tuner.decisions().size(), 2u);
}

TEST(LaunchTuning, TheDefaultStaysUnlessBeatenByTheMargin) {
  LaunchTuner tuner("test device", "");
  FakeDevice dev;
  dev.per_launch = {{128, 970}, {1024, 990}};  // 3% and 1%: within the noise a launch size has
  EXPECT_EQ(tuner.choose(pointwise_kernel(), kBig, kBigStrides, 0xf, LaunchLimits{}, dev.clock()).shape.block, 256u);
  const std::string text = launch_decision_text(tuner.decisions().at(0));
  EXPECT_NE(text.find("the default kept"), std::string::npos) << text;
}

TEST(LaunchTuning, NothingIsTimedWhileTheStreamIsCapturedAndARefusedBlockIsNoChoice) {
  LaunchTuner tuner("test device", "");
  FakeDevice dev;
  dev.per_launch = {{1024, 100}, {512, 600}};
  dev.ready = false;
  const LaunchTuner::Choice waiting = tuner.choose(pointwise_kernel(), kBig, kBigStrides, 0xf, LaunchLimits{}, dev.clock());
  EXPECT_EQ(waiting.shape.block, 256u);
  EXPECT_FALSE(waiting.decided) << "the caller asks again at the next launch";
  EXPECT_EQ(dev.timings, 0);
  EXPECT_TRUE(tuner.decisions().empty()) << "a default taken for want of a clock is not remembered";
  dev.ready = true;
  dev.refused = {1024};  // more threads than the kernel's registers allow
  EXPECT_EQ(tuner.choose(pointwise_kernel(), kBig, kBigStrides, 0xf, LaunchLimits{}, dev.clock()).shape.block, 512u);
  EXPECT_NE(launch_decision_text(tuner.decisions().at(0)).find("block 1024 (grid 1024) refused"), std::string::npos);
}

TEST(LaunchTuning, AWarmStartReadsTheDecisionAndADamagedOneIsTimedAgain) {
  testing::TempDir dir;
  FakeDevice dev;
  dev.per_launch = {{128, 500}};
  {
    LaunchTuner cold("test device", dir.path().string());
    EXPECT_EQ(cold.choose(pointwise_kernel(), kBig, kBigStrides, 0xf, LaunchLimits{}, dev.clock()).shape.block, 128u);
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir.path() / "launches")) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  ASSERT_EQ(files.size(), 1u);
  const int timed = dev.timings;
  LaunchTuner warm("test device", dir.path().string());
  EXPECT_EQ(warm.choose(pointwise_kernel(), kBig, kBigStrides, 0xf, LaunchLimits{}, dev.clock()).shape.block, 128u);
  EXPECT_EQ(dev.timings, timed) << "read back, not timed";
  EXPECT_TRUE(warm.decisions().at(0).from_cache);
  // Another GPU's decisions are not this one's, nor another alignment's (a kernel's vector path).
  LaunchTuner misaligned("test device", dir.path().string());
  misaligned.choose(pointwise_kernel(), kBig, kBigStrides, 0x7, LaunchLimits{}, dev.clock());
  EXPECT_GT(dev.timings, timed);
  const int aligned_timed = dev.timings;
  LaunchTuner other("another device", dir.path().string());
  other.choose(pointwise_kernel(), kBig, kBigStrides, 0xf, LaunchLimits{}, dev.clock());
  EXPECT_GT(dev.timings, aligned_timed);
  // A file naming a candidate out of range, sizes the kernel no longer tries, or a winner that never
  // ran (a size it may not launch with) is timed again.
  std::ifstream stored_file(files[0]);
  const std::string stored((std::istreambuf_iterator<char>(stored_file)), std::istreambuf_iterator<char>());
  std::string never_ran = stored;
  const size_t line = never_ran.find("8192 128 1 ");
  ASSERT_NE(line, std::string::npos) << stored;
  never_ran.replace(line, 11, "8192 128 0 ");
  for (const std::string& damage : {std::string("tcprof-launch 1\nchosen 9 0 0\n"),
                                    std::string("tcprof-launch 1\nchosen 1 0.05 0.5\n1 64 1 10 0\n"), never_ran}) {
    std::ofstream(files[0]) << damage;
    const int before = dev.timings;
    LaunchTuner again("test device", dir.path().string());
    EXPECT_EQ(again.choose(pointwise_kernel(), kBig, kBigStrides, 0xf, LaunchLimits{}, dev.clock()).shape.block, 128u);
    EXPECT_GT(dev.timings, before) << damage;
  }
}

// The tuner's whole path in the cuda backend, run in emulation with the widest block made the
// fastest (so every tuned kernel launches at a size the default never takes): each kernel's first
// launch over a new shape races its blocks, the decisions land beside the kernel cache and in the
// log, and the tuned program's answer is eager's and bit for bit the untuned one's.
TEST(LaunchTuning, TheBackendTunesEveryKernelInEmulationAndKeepsTheAnswer) {
  at::NoGradGuard no_grad;
  testing::TempDir cache;
  CompileOptions options;
  options.backend = "cuda";
  options.strict = true;
  options.cuda_arch = "sm_90";
  options.kernel_cache_dir = cache.path().string();
  const auto in = inputs_for({"i64[4,32](0,512)"}, 0);
  CompiledModule untuned(load_model(sample("gpt_tiny")), options, nullptr);
  untuned.call(in);
  const c10::IValue reference = untuned.call(in);
  EXPECT_NE(testing::totals(untuned).ir.find("# launch sizes: the defaults in emulation"), std::string::npos)
      << "emulation tunes only when asked";

  setenv("TCPROF_CUDA_EMULATION_TUNING", "widest", 1);
  set_log_mask(static_cast<uint32_t>(LogChannel::Autotune));
  ::testing::internal::CaptureStderr();
  CompiledModule tuned(load_model(sample("gpt_tiny")), options, nullptr);
  tuned.call(in);
  const c10::IValue first = tuned.call(in), second = tuned.call(in);
  const std::string log = ::testing::internal::GetCapturedStderr();
  set_log_mask(0);
  unsetenv("TCPROF_CUDA_EMULATION_TUNING");
  expect_same_output(first, tuned.call_eager(in));
  EXPECT_TRUE(at::equal(first.toTensor(), reference.toTensor()));
  EXPECT_TRUE(at::equal(second.toTensor(), reference.toTensor()));
  EXPECT_NE(testing::totals(tuned).ir.find("# launch sizes: tuned on the CPU's emulation"), std::string::npos);
  EXPECT_NE(log.find("cuda launch tcu_"), std::string::npos) << log;
  EXPECT_NE(log.find(": block 1024 (grid "), std::string::npos) << "a pointwise kernel at 1,024 threads\n" << log;
  EXPECT_NE(log.find("faster than the default"), std::string::npos) << log;
  int stored = 0;
  for (const auto& e : fs::recursive_directory_iterator(cache.path() / "launches")) stored += e.is_regular_file();
  EXPECT_GT(stored, 1) << "one decision per kernel and shape";
  setenv("TCPROF_CUDA_EMULATION_TUNING", "fast", 1);
  try {
    CompiledModule bad(load_model(sample("gpt_tiny")), options, nullptr);
    bad.call(in);
    ADD_FAILURE() << "a bad TCPROF_CUDA_EMULATION_TUNING was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
  unsetenv("TCPROF_CUDA_EMULATION_TUNING");

  // Off for an A/B: the header says the defaults run.
  setenv("TCPROF_CUDA_EMULATION_TUNING", "widest", 1);
  setenv("TCPROF_CUDA_OFF", "launch-tuning", 1);
  CompiledModule off(load_model(sample("gpt_tiny")), options, nullptr);
  off.call(in);
  unsetenv("TCPROF_CUDA_OFF");
  unsetenv("TCPROF_CUDA_EMULATION_TUNING");
  EXPECT_NE(testing::totals(off).ir.find("# launch sizes: the defaults (TCPROF_CUDA_OFF=launch-tuning)"), std::string::npos);
}

}  // namespace
}  // namespace tcprof
