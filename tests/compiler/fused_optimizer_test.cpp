// The fused optimizer step against torch::optim on the same parameters and gradients: after
// several steps every parameter agrees to float rounding.
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <torch/optim.h>

#include "compiler/optim/fused_optimizer.h"
#include "core/error.h"
#include "tests/compiler/optimizer_test_support.h"

namespace tcprof {
namespace {

using testing::clones;
using testing::optimizer_params;
using testing::set_same_grads;

void expect_close(const std::vector<at::Tensor>& fused, const std::vector<at::Tensor>& eager, const char* what) {
  for (size_t i = 0; i < fused.size(); ++i) {
    double diff = (fused[i] - eager[i]).abs().max().item<double>();
    double scale = eager[i].abs().max().item<double>() + 1e-12;
    EXPECT_LT(diff / scale, 1e-5) << what << " parameter " << i << " max abs diff " << diff;
  }
}

// The fused `kind` step and torch::optim's `Reference` (made from the reference parameters and the
// weight decay) over six steps with the same gradients, at each weight decay: the parameters agree.
template <typename Reference>
void expect_matches_over_steps(const std::string& kind, std::vector<double> decays,
                               const std::function<Reference(std::vector<at::Tensor>, double)>& make_reference) {
  for (double wd : decays) {
    auto params = optimizer_params(7);
    auto reference = clones(params);
    FusedOptimizerOptions o;
    o.kind = kind;
    o.lr = 1e-2;
    o.weight_decay = wd;
    FusedOptimizer fused(params, o);
    Reference eager = make_reference(reference, wd);
    for (int step = 0; step < 6; ++step) {
      set_same_grads(params, reference, step);
      fused.step();
      eager.step();
    }
    expect_close(params, reference, (kind + " with weight decay " + std::to_string(wd)).c_str());
    EXPECT_FALSE(params[0].equal(optimizer_params(7)[0]));  // it did move
  }
}

TEST(FusedOptimizer, AdamMatchesTorchOptimAdamOverSteps) {
  expect_matches_over_steps<torch::optim::Adam>("adam", {0.0, 0.01}, [](std::vector<at::Tensor> p, double wd) {
    return torch::optim::Adam(p, torch::optim::AdamOptions(1e-2).weight_decay(wd));
  });
}

// AdamW decays the parameter itself (p * (1 - lr * wd)) instead of adding wd * p to the gradient.
TEST(FusedOptimizer, AdamWMatchesTorchOptimAdamWOverSteps) {
  expect_matches_over_steps<torch::optim::AdamW>("adamw", {0.0, 0.01, 0.3}, [](std::vector<at::Tensor> p, double wd) {
    return torch::optim::AdamW(p, torch::optim::AdamWOptions(1e-2).weight_decay(wd));
  });
  // Decoupled decay is not L2: with the same weight decay, Adam ends elsewhere.
  auto a = optimizer_params(11), b = optimizer_params(11);
  FusedOptimizerOptions o;
  o.lr = 1e-2;
  o.weight_decay = 0.3;
  o.kind = "adamw";
  FusedOptimizer adamw(a, o);
  o.kind = "adam";
  FusedOptimizer adam(b, o);
  for (int step = 0; step < 3; ++step) {
    set_same_grads(a, b, step);
    adamw.step();
    adam.step();
  }
  EXPECT_FALSE(at::allclose(a[2], b[2], 1e-4, 1e-6));
  EXPECT_EQ(adamw.describe().rfind("adamw over 6 parameters", 0), 0u) << adamw.describe();
}

TEST(FusedOptimizer, SgdWithAndWithoutMomentumMatchesTorchOptimSgd) {
  for (double momentum : {0.0, 0.9}) {
    auto params = optimizer_params(11);
    auto reference = clones(params);
    FusedOptimizerOptions o;
    o.kind = "sgd";
    o.lr = 0.05;
    o.momentum = momentum;
    o.weight_decay = 0.001;
    FusedOptimizer fused(params, o);
    torch::optim::SGD sgd(reference, torch::optim::SGDOptions(o.lr).momentum(momentum).weight_decay(0.001));
    for (int step = 0; step < 5; ++step) {
      set_same_grads(params, reference, step);
      fused.step();
      sgd.step();
    }
    expect_close(params, reference, momentum == 0 ? "sgd" : "sgd with momentum");
  }
}

// zero_grad drops the gradients as PyTorch's does by default, so the next backward hands over a
// new gradient instead of adding it into the old one zeroed; a step without gradients moves nothing.
TEST(FusedOptimizer, ZeroGradDropsTheGradientsAndBackwardHandsItsGradientOver) {
  auto params = optimizer_params(3);
  for (auto& p : params) p.set_requires_grad(true);
  FusedOptimizerOptions o;
  o.kind = "adam";
  FusedOptimizer fused(params, o);
  (params[0] * 2).sum().backward();
  ASSERT_TRUE(params[0].grad().defined());
  const at::Tensor first = params[0].grad();
  fused.zero_grad();
  for (const auto& p : params) EXPECT_FALSE(p.grad().defined());
  const at::Tensor before = params[0].detach().clone();
  fused.step();
  EXPECT_TRUE(params[0].detach().equal(before));
  (params[0] * 3).sum().backward();
  ASSERT_TRUE(params[0].grad().defined());
  EXPECT_TRUE(params[0].grad().equal(at::full_like(params[0], 3)));
  EXPECT_FALSE(params[0].grad().is_same(first));               // a new gradient, not the old one zeroed
  EXPECT_TRUE(first.equal(at::full_like(params[0], 2)));       // which nothing wrote into
}

TEST(FusedOptimizer, ParametersItCannotStepAreAUsageErrorNamingWhy) {
  EXPECT_EQ(FusedOptimizer::unsupported_reason({at::zeros({4})}), "");
  EXPECT_EQ(FusedOptimizer::unsupported_reason({at::zeros({4}, at::kDouble)}), "a parameter is Double");
  EXPECT_EQ(FusedOptimizer::unsupported_reason({at::zeros({4, 4}).t()}), "a parameter is not contiguous");
  FusedOptimizerOptions o;
  o.kind = "lamb";
  EXPECT_THROW(FusedOptimizer({at::zeros({4})}, o), Error);
}

}  // namespace
}  // namespace tcprof
