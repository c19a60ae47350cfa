// tcprof's CUDA optimizer step against torch::optim on the same parameters and gradients: after
// several steps, with a parameter that skips steps and one off the vectors' alignment, every
// parameter agrees to float rounding. In emulation on the CPU (this machine, CI) and on a GPU when
// one is present; NVRTC compiles the unit for the H200's architecture either way.
#include <functional>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>
#include <torch/optim.h>

#include "compiler/optim/cuda_fused_optimizer.h"
#include "compiler/toolchain/nvrtc_compiler.h"
#include "core/error.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/compiler/optimizer_test_support.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {
using testing::clones;
using testing::optimizer_params;
using testing::set_same_grads;

// optimizer_params with an empty parameter between the others (it has no chunk in the kernel's
// table) and one more that starts 4 bytes into its buffer: contiguous, but off the 16-byte
// alignment of a vector access (the emulation aborts on a misaligned one).
std::vector<at::Tensor> params_with_a_misaligned_one(c10::Device device) {
  auto params = optimizer_params(7, device);
  params.insert(params.begin() + 3, at::randn({0, 3}, at::TensorOptions().device(device)));
  at::Tensor buffer = at::randn({16390}, at::TensorOptions().device(device));
  params.push_back(buffer.narrow(0, 1, 16389));
  return params;
}

template <typename Reference>
void expect_matches_over_steps(FusedOptimizerOptions o, int steps,
                               const std::function<Reference(std::vector<at::Tensor>)>& make_reference) {
  for (c10::Device device : testing::optimizer_devices()) {
    auto params = params_with_a_misaligned_one(device);
    ASSERT_EQ(CudaFusedOptimizer::unsupported_reason(params), "");
    auto start = clones(params);
    auto reference = clones(params);
    CudaFusedOptimizer fused(params, o);
    Reference eager = make_reference(reference);
    for (int step = 0; step < steps; ++step) {
      set_same_grads(params, reference, step);
      fused.step();
      eager.step();
    }
    EXPECT_EQ(fused.launches(), steps) << "one launch a step";
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].numel() == 0) continue;  // stepped without a chunk: nothing to compare
      double diff = (params[i] - reference[i]).abs().max().item<double>();
      double scale = reference[i].abs().max().item<double>() + 1e-12;
      EXPECT_LT(diff / scale, 1e-5) << o.kind << " on " << device << ", parameter " << i << ": max abs diff " << diff;
      EXPECT_FALSE(params[i].equal(start[i])) << o.kind << " on " << device << ": parameter " << i << " did not move";
    }
  }
}

TEST(CudaFusedOptimizer, AdamMatchesTorchOptimAdamOverSteps) {
  for (double wd : {0.0, 0.01}) {
    FusedOptimizerOptions o;
    o.kind = "adam", o.lr = 1e-2, o.weight_decay = wd;
    expect_matches_over_steps<torch::optim::Adam>(o, 6, [wd](std::vector<at::Tensor> p) {
      return torch::optim::Adam(p, torch::optim::AdamOptions(1e-2).weight_decay(wd));
    });
  }
}

TEST(CudaFusedOptimizer, AdamWMatchesTorchOptimAdamWOverSteps) {
  FusedOptimizerOptions o;
  o.kind = "adamw", o.lr = 1e-2, o.weight_decay = 0.3;
  expect_matches_over_steps<torch::optim::AdamW>(o, 6, [](std::vector<at::Tensor> p) {
    return torch::optim::AdamW(p, torch::optim::AdamWOptions(1e-2).weight_decay(0.3));
  });
}

TEST(CudaFusedOptimizer, SgdWithAndWithoutMomentumMatchesTorchOptimSgd) {
  for (double momentum : {0.0, 0.9}) {
    FusedOptimizerOptions o;
    o.kind = "sgd", o.lr = 0.05, o.momentum = momentum, o.weight_decay = 0.001;
    expect_matches_over_steps<torch::optim::SGD>(o, 5, [momentum](std::vector<at::Tensor> p) {
      return torch::optim::SGD(p, torch::optim::SGDOptions(0.05).momentum(momentum).weight_decay(0.001));
    });
  }
}

// A step with no gradient anywhere launches nothing and moves nothing; zero_grad drops them.
TEST(CudaFusedOptimizer, ZeroGradDropsTheGradientsAndAStepWithoutThemIsNoLaunch) {
  auto params = optimizer_params(3);
  for (auto& p : params) p.set_requires_grad(true);
  FusedOptimizerOptions o;
  CudaFusedOptimizer fused(params, o);
  (params[0] * 2).sum().backward();
  ASSERT_TRUE(params[0].grad().defined());
  fused.zero_grad();
  for (const auto& p : params) EXPECT_FALSE(p.grad().defined());
  const at::Tensor before = params[0].detach().clone();
  fused.step();
  EXPECT_EQ(fused.launches(), 0);
  EXPECT_TRUE(params[0].detach().equal(before));
  EXPECT_NE(fused.describe().find("(tcprof's CUDA kernel, emulated)"), std::string::npos) << fused.describe();
}

TEST(CudaFusedOptimizer, TheUnitCompilesWithNvrtcForTheH200) {
  std::string why;
  if (!NvrtcCompiler::available(&why)) GTEST_SKIP() << why;
  CubinResult r = NvrtcCompiler::shared().compile(CudaFusedOptimizer::source(), "sm_90", "tcprof_optimizer.cu");
  EXPECT_FALSE(r.cubin.empty());
  EXPECT_EQ(r.log.find("warning"), std::string::npos) << r.log;
}

TEST(CudaFusedOptimizer, ParametersItCannotStepAreAUsageErrorNamingWhy) {
  EXPECT_EQ(CudaFusedOptimizer::unsupported_reason({at::zeros({4})}), "");
  EXPECT_EQ(CudaFusedOptimizer::unsupported_reason({}), "there are no parameters");
  EXPECT_EQ(CudaFusedOptimizer::unsupported_reason({at::zeros({4}, at::kBFloat16)}), "a parameter is BFloat16");
  EXPECT_EQ(CudaFusedOptimizer::unsupported_reason({at::zeros({4, 4}).t()}), "a parameter is not contiguous");
  EXPECT_THROW(CudaFusedOptimizer({at::zeros({4}, at::kDouble)}, FusedOptimizerOptions{}), Error);
  // A tied weight listed twice: two blocks would update its elements at once.
  at::Tensor tied = at::zeros({4, 4});
  EXPECT_EQ(CudaFusedOptimizer::unsupported_reason({at::zeros({2}), tied, tied.view({16})}),
            "parameters 1 and 2 share memory (a tied weight listed twice?)");
  EXPECT_EQ(CudaFusedOptimizer::unsupported_reason({tied.narrow(0, 0, 2), tied.narrow(0, 2, 2)}), "");
  FusedOptimizerOptions o;
  o.kind = "lamb";
  EXPECT_THROW(CudaFusedOptimizer({at::zeros({4})}, o), Error);
}

// A step refused for one gradient (the wrong dtype) moves no parameter and no step count: the
// steps after it still agree with torch::optim's.
TEST(CudaFusedOptimizer, ARefusedStepChangesNothing) {
  auto params = optimizer_params(5);
  auto reference = clones(params);
  FusedOptimizerOptions o;
  o.kind = "adam", o.lr = 1e-2;
  CudaFusedOptimizer fused(params, o);
  torch::optim::Adam eager(reference, torch::optim::AdamOptions(1e-2));
  set_same_grads(params, reference, 0);
  const at::Tensor before = params[0].clone();
  params[4].mutable_grad() = params[4].grad().to(at::kDouble);
  EXPECT_THROW(fused.step(), c10::Error);
  EXPECT_TRUE(params[0].equal(before));
  for (int step = 0; step < 3; ++step) {
    set_same_grads(params, reference, step);
    fused.step();
    eager.step();
  }
  for (size_t i = 0; i < params.size(); ++i) {
    double diff = (params[i] - reference[i]).abs().max().item<double>();
    EXPECT_LT(diff / (reference[i].abs().max().item<double>() + 1e-12), 1e-5) << "parameter " << i;
  }
}

// On a GPU, train and bench --train take the step through this kernel, and bench --train times it
// beside LibTorch's fused kernels and torch::optim on the same parameters. TCPROF_CUDA_OFF turns it
// off for an A/B: LibTorch's fused kernels take the step.
TEST(CudaFusedOptimizer, ItIsTheGpuStepAndBenchTrainTimesItBesideLibTorchs) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const std::string bench = fmt::format("{} bench {} --input 'i64[2,16](0,512)' --target 'i64[2,16](0,512)' --loss cross_entropy "
                                        "--optimizer adam --train --device cuda --iters 3 --warmup 1 --json --db none",
                                        TCPROF_BIN, testing::sample("gpt_tiny"));
  auto r = testing::run_command(bench);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["optimizer"]["compiled"], "fused adam (tcprof CUDA)") << j["optimizer"].dump();
  std::vector<std::string> kernels;
  for (const auto& k : j["optimizer"]["kernels"]) kernels.push_back(k["name"].get<std::string>());
  EXPECT_EQ(kernels, (std::vector<std::string>{"fused adam (tcprof CUDA)", "fused adam (LibTorch)", "torch::optim adam"}));
  auto off = testing::run_command("TCPROF_CUDA_OFF=optimizer-kernel " + bench);
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_EQ(nlohmann::json::parse(off.output)["optimizer"]["compiled"], "fused adam (LibTorch)");
}

}  // namespace
}  // namespace tcprof
