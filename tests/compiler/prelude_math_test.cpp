// The float math every generated kernel uses (codegen_prelude: tc_exp, tc_exp_neg, tc_erf,
// tc_norm_cdf, tc_gelu_grad, tc_tanh, tc_sigmoid), compiled by the real toolchain with the kernels' flags and
// called from a vectorised loop as kernels call it, against double precision on a dense grid: the
// accuracy the prelude's header promises, exact values where eager gives them, and NaN/inf behaviour.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compiler/backends/cpp/codegen/codegen_cpp.h"
#include "compiler/toolchain/kernel_library.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using Apply = void (*)(const float*, float*, int64_t);

struct PreludeMath {
  KernelLibraryResult library;
  explicit PreludeMath(const testing::TempDir& dir) {
    std::string source = codegen_prelude();
    for (const char* f : {"tc_exp", "tc_exp_neg", "tc_erf", "tc_norm_cdf", "tc_gelu_grad", "tc_tanh", "tc_sigmoid"}) {
      source += std::string("extern \"C\" void apply_") + f +
                "(const float* x, float* y, int64_t n) {\n  #pragma omp simd\n  for (int64_t i = 0; i < n; ++i) y[i] = " +
                f + "(x[i]);\n}\n";
    }
    KernelLibraryOptions options;
    options.cache_dir = dir.file("cache");
    library = KernelLibraryBuilder(options).compile(source);
  }
  std::vector<float> apply(const char* f, const std::vector<float>& x) const {
    std::vector<float> y(x.size());
    reinterpret_cast<Apply>(library.library->symbol(std::string("apply_") + f))(x.data(), y.data(),
                                                                                 static_cast<int64_t>(x.size()));
    return y;
  }
};

std::vector<float> grid(float lo, float hi, int n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n - 1);
  return x;
}

// Largest |got - want| / |want| over the grid (points where want is 0 must give exactly 0).
template <typename Ref>
double worst_relative(const std::vector<float>& x, const std::vector<float>& got, Ref ref, float* where) {
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double want = ref(static_cast<double>(x[i]));
    double err = want == 0 ? std::fabs(got[i]) : std::fabs(got[i] - want) / std::fabs(want);
    if (err > worst) {
      worst = err;
      *where = x[i];
    }
  }
  return worst;
}

class PreludeMathTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    math_ = new PreludeMath(*dir_);
  }
  static void TearDownTestSuite() {
    delete math_;
    delete dir_;
  }
  static testing::TempDir* dir_;
  static PreludeMath* math_;
};
testing::TempDir* PreludeMathTest::dir_ = nullptr;
PreludeMath* PreludeMathTest::math_ = nullptr;

TEST_F(PreludeMathTest, ErfIsRelativeAccurateEverywhereIncludingNearZero) {
  ASSERT_TRUE(math_->library.library);
  for (auto [lo, hi] : {std::pair{-6.0f, 6.0f}, std::pair{-1e-3f, 1e-3f}, std::pair{-1e-30f, 1e-30f}}) {
    std::vector<float> x = grid(lo, hi, 200001);
    float at = 0;
    double worst = worst_relative(x, math_->apply("tc_erf", x), [](double v) { return std::erf(v); }, &at);
    EXPECT_LT(worst, 5e-7) << "on [" << lo << ", " << hi << "], worst at x = " << at;
  }
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> y = math_->apply("tc_erf", {0.0f, -0.0f, 3.95f, 4.0f, 10.0f, inf, -inf, std::nanf("")});
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_NEAR(y[2], 1.0f, 1e-6f);
  EXPECT_NEAR(y[3], 1.0f, 1e-6f);
  EXPECT_NEAR(y[5], 1.0f, 1e-6f);
  EXPECT_NEAR(y[6], -1.0f, 1e-6f);
  EXPECT_TRUE(std::isnan(y[7]));
  // Odd, exactly: erf(-x) = -erf(x), as GELU of negative inputs relies on.
  std::vector<float> x = grid(0.0f, 5.0f, 10001), neg(x.size());
  for (size_t i = 0; i < x.size(); ++i) neg[i] = -x[i];
  std::vector<float> pos_y = math_->apply("tc_erf", x), neg_y = math_->apply("tc_erf", neg);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(neg_y[i], -pos_y[i]) << x[i];
}

// From 1.75 on, erf is 1 - erfc: within an ulp of 1 (6e-8), where the single rational fit it replaced
// was off by up to 4e-7, which 1 + erf(x) turned into a 3% error of GELU(-4.65).
TEST_F(PreludeMathTest, ErfIsWithinAnUlpOfOneInItsTail) {
  ASSERT_TRUE(math_->library.library);
  std::vector<float> x = grid(1.75f, 6.5f, 200001);
  std::vector<float> y = math_->apply("tc_erf", x);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_LE(std::fabs(y[i] - std::erf(static_cast<double>(x[i]))), 6e-8) << "x = " << x[i];
  }
}

double norm_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// GELU is x * Phi(x): for negative x, Phi itself must be relative-accurate down to where eager's
// 0.5 * (1 + erf) becomes 0 (x = -5.54, Phi = 2^-26: erf rounds to -1), not 0.5 * (1 + erf) itself,
// which is only good to 3e-8 absolute there. Below that it is 0, as eager's is (GELU is then -0,
// and -0 * inf is NaN in both). Above 0 it is 1 - Phi(-x), within 4 ulps of its value.
TEST_F(PreludeMathTest, NormalCdfIsRelativeAccurateInTheNegativeTail) {
  ASSERT_TRUE(math_->library.library);
  float at = 0;
  std::vector<float> x = grid(-5.5f, 0.0f, 200001);
  EXPECT_LT(worst_relative(x, math_->apply("tc_norm_cdf", x), norm_cdf, &at), 1.5e-6) << at;
  x = grid(-8.4f, -5.6f, 2001);
  for (float v : math_->apply("tc_norm_cdf", x)) ASSERT_EQ(v, 0.0f);
  x = grid(0.0f, 10.0f, 200001);
  std::vector<float> y = math_->apply("tc_norm_cdf", x);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], norm_cdf(x[i]), 2.4e-7) << "x = " << x[i];
  const float inf = std::numeric_limits<float>::infinity();
  y = math_->apply("tc_norm_cdf", {0.0f, -9.0f, 9.0f, -inf, inf, std::nanf("")});
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(y[4], 1.0f);
  EXPECT_TRUE(std::isnan(y[5]));
}

double gelu_grad(double x) { return norm_cdf(x) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }

// GELU's gradient, Phi(x) + x phi(x) with one exp for both: within 3e-7 absolute everywhere (its
// largest value is 1.13), relative-accurate where it is small in the negative tail, x phi(x) alone
// below -5.54 where Phi is 0 (as eager's float formula has it: 0.5 * (1 + erf) is 0 there), 0 once
// phi underflows, 0.5 at 0, and NaN at NaN and at +-inf (eager's x * pdf is inf * 0 there). Far in
// the tail the float x * x itself limits it, as it limits eager's exp(-0.5 * x * x): its rounding
// (6e-8 relative) times x^2 / 2 (up to 85) is up to 5e-6 relative in exp.
TEST_F(PreludeMathTest, GeluGradientIsAccurateWithOneExp) {
  ASSERT_TRUE(math_->library.library);
  float at = 0;
  std::vector<float> x = grid(-12.0f, 12.0f, 400001);
  std::vector<float> y = math_->apply("tc_gelu_grad", x);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], gelu_grad(x[i]), 3e-7) << "x = " << x[i];
  x = grid(-5.5f, -1.0f, 200001);
  EXPECT_LT(worst_relative(x, math_->apply("tc_gelu_grad", x), gelu_grad, &at), 5e-6) << at;
  x = grid(-13.0f, -5.6f, 20001);
  EXPECT_LT(worst_relative(x, math_->apply("tc_gelu_grad", x),
                           [](double v) { return v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI); }, &at),
            1e-5)
      << at;
  for (float v : math_->apply("tc_gelu_grad", grid(-40.0f, -13.2f, 2001))) ASSERT_EQ(v, 0.0f);
  const float inf = std::numeric_limits<float>::infinity();
  y = math_->apply("tc_gelu_grad", {0.0f, 40.0f, inf, -inf, std::nanf("")});
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_TRUE(std::isnan(y[4]));
}

TEST_F(PreludeMathTest, ExpTanhAndSigmoidMeetTheirDocumentedAccuracy) {
  ASSERT_TRUE(math_->library.library);
  float at = 0;
  // Below about -86.6 the result (< 2^-125, near the smallest normal float) flushes to 0.
  std::vector<float> x = grid(-86.5f, 88.0f, 400001);
  EXPECT_LT(worst_relative(x, math_->apply("tc_exp", x), [](double v) { return std::exp(v); }, &at), 3e-7) << at;
  std::vector<float> neg = grid(-86.5f, 0.0f, 400001);
  EXPECT_LT(worst_relative(neg, math_->apply("tc_exp_neg", neg), [](double v) { return std::exp(v); }, &at), 3e-7)
      << at;
  x = grid(-10.0f, 10.0f, 200001);
  EXPECT_LT(worst_relative(x, math_->apply("tc_tanh", x), [](double v) { return std::tanh(v); }, &at), 5e-7) << at;
  EXPECT_LT(worst_relative(x, math_->apply("tc_sigmoid", x), [](double v) { return 1 / (1 + std::exp(-v)); }, &at), 5e-7)
      << at;
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> e = math_->apply("tc_exp", {0.0f, -200.0f, 200.0f, inf, -inf, std::nanf("")});
  EXPECT_EQ(e[0], 1.0f);
  EXPECT_EQ(e[1], 0.0f);
  EXPECT_EQ(e[2], inf);
  EXPECT_EQ(e[3], inf);
  EXPECT_EQ(e[4], 0.0f);
  EXPECT_TRUE(std::isnan(e[5]));
  std::vector<float> t = math_->apply("tc_tanh", {0.0f, 50.0f, -50.0f, std::nanf("")});
  EXPECT_EQ(t[0], 0.0f);
  EXPECT_EQ(t[1], 1.0f);
  EXPECT_EQ(t[2], -1.0f);
  EXPECT_TRUE(std::isnan(t[3]));
}

}  // namespace
}  // namespace tcprof
