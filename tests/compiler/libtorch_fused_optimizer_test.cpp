// LibTorch's fused optimizer kernels (the step for parameters on a GPU) against torch::optim on
// the same parameters and gradients: after several steps, with a parameter that skips steps, every
// parameter agrees to float rounding. On the CPU where LibTorch has the kernels (2.4 or later), and
// on a GPU when one is present; a LibTorch without them refuses with a reason.
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <torch/optim.h>

#include "compiler/optim/libtorch_fused_optimizer.h"
#include "core/error.h"
#include "tests/compiler/optimizer_test_support.h"

namespace tcprof {
namespace {
using testing::clones;
using testing::optimizer_params;
using testing::set_same_grads;

template <typename Reference>
void expect_matches_over_steps(FusedOptimizerOptions o, const std::function<Reference(std::vector<at::Tensor>)>& make_reference) {
  for (c10::Device device : testing::optimizer_devices()) {
    auto params = optimizer_params(7, device);
    const std::string why = LibTorchFusedOptimizer::unsupported_reason(params);
    if (!why.empty()) {
      // Only a LibTorch before 2.4 may refuse plain float32 parameters, and it must say so.
      EXPECT_NE(why.find("2.4 or later"), std::string::npos) << why;
      EXPECT_THROW(LibTorchFusedOptimizer(params, o), Error);
      GTEST_SKIP() << why;
    }
    auto reference = clones(params);
    LibTorchFusedOptimizer fused(params, o);
    Reference eager = make_reference(reference);
    for (int step = 0; step < 6; ++step) {
      set_same_grads(params, reference, step);
      fused.step();
      eager.step();
    }
    auto untouched = optimizer_params(7, device);
    for (size_t i = 0; i < params.size(); ++i) {
      double diff = (params[i] - reference[i]).abs().max().item<double>();
      double scale = reference[i].abs().max().item<double>() + 1e-12;
      EXPECT_LT(diff / scale, 1e-5) << o.kind << " on " << device << ", parameter " << i << ": max abs diff " << diff;
      EXPECT_FALSE(params[i].equal(untouched[i])) << "parameter " << i << " did not move";
    }
  }
}

TEST(LibTorchFusedOptimizer, AdamMatchesTorchOptimAdamOverSteps) {
  FusedOptimizerOptions o;
  o.kind = "adam", o.lr = 1e-2, o.weight_decay = 0.01;
  expect_matches_over_steps<torch::optim::Adam>(o, [](std::vector<at::Tensor> p) {
    return torch::optim::Adam(p, torch::optim::AdamOptions(1e-2).weight_decay(0.01));
  });
}

TEST(LibTorchFusedOptimizer, AdamWMatchesTorchOptimAdamWOverSteps) {
  FusedOptimizerOptions o;
  o.kind = "adamw", o.lr = 1e-2, o.weight_decay = 0.05;
  expect_matches_over_steps<torch::optim::AdamW>(o, [](std::vector<at::Tensor> p) {
    return torch::optim::AdamW(p, torch::optim::AdamWOptions(1e-2).weight_decay(0.05));
  });
}

TEST(LibTorchFusedOptimizer, SgdWithMomentumMatchesTorchOptimSgdOverSteps) {
  FusedOptimizerOptions o;
  o.kind = "sgd", o.lr = 1e-2, o.momentum = 0.9, o.weight_decay = 0.001;
  expect_matches_over_steps<torch::optim::SGD>(o, [](std::vector<at::Tensor> p) {
    return torch::optim::SGD(p, torch::optim::SGDOptions(1e-2).momentum(0.9).weight_decay(0.001));
  });
}

TEST(LibTorchFusedOptimizer, RefusesMixedDevicesOrDtypesWithAReason) {
  std::vector<at::Tensor> mixed{at::zeros({2}), at::zeros({2}, at::kDouble)};
  EXPECT_FALSE(LibTorchFusedOptimizer::unsupported_reason(mixed).empty());
  EXPECT_THROW(LibTorchFusedOptimizer(mixed, FusedOptimizerOptions{}), Error);
  std::vector<at::Tensor> ints{at::zeros({2}, at::kLong)};
  EXPECT_FALSE(LibTorchFusedOptimizer::unsupported_reason(ints).empty());
}

}  // namespace
}  // namespace tcprof
