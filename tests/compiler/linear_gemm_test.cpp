// Linear layers as GEMMs against a weight prepared at compile time (run/linear_gemm.h,
// run/onednn_linear.h, schedule/plan_linear.h): the transposed copy itself, both GEMMs (oneDNN's
// over a packed weight, OpenBLAS's over a transposed one) against LibTorch's linear on awkward
// shapes and strides, and a compiled model whose linears take that path.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "compiler/backends/cpp/codegen/codegen_cpp.h"
#include "compiler/backends/cpp/run/linear_gemm.h"
#include "compiler/backends/cpp/run/mkl_packed_linear.h"
#include "compiler/backends/cpp/run/onednn_convolution.h"
#include "compiler/backends/cpp/run/onednn_linear.h"
#include "compiler/toolchain/kernel_library.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::expect_compiled_matches_eager;
using testing::expect_same_output;
using testing::inputs_for;
using testing::sample;
using testing::strict_cpp;

TEST(LinearGemm, TransposedWeightIsTheTransposeOnEveryTileEdge) {
  // Sizes around the 16-wide tile: partial tiles on both edges, one row, one column.
  for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 7}, {7, 1}, {16, 16}, {17, 33}, {48, 5}, {100, 70}}) {
    at::Tensor w = at::randn({n, k});
    at::Tensor t = transposed_weight(w);
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_EQ(t.sizes(), (std::vector<int64_t>{k, n}));
    EXPECT_TRUE(at::equal(t, w.t())) << n << "x" << k;
  }
  // A non-contiguous weight (a slice of a larger one) is read through its strides.
  at::Tensor big = at::randn({20, 40});
  at::Tensor w = big.narrow(1, 3, 30);
  EXPECT_TRUE(at::equal(transposed_weight(w), w.t()));
}

TEST(LinearGemm, MatchesLibTorchLinearOnAnyLeadingShapeAndStride) {
  at::NoGradGuard no_grad;
  at::Tensor w = at::randn({13, 24}), b = at::randn({13});
  at::Tensor wt = transposed_weight(w);
  std::vector<at::Tensor> xs = {
      at::randn({5, 24}),                    // 2-D
      at::randn({2, 3, 24}),                 // 3-D (a transformer's [B, T, C])
      at::randn({2, 2, 3, 24}),              // 4-D (ConvNeXt's channels-last [N, H, W, C])
      at::randn({3, 24, 2}).transpose(1, 2), // strided rows: copied, as LibTorch's reshape does
      at::randn({0, 24}),                    // no rows
  };
  for (const at::Tensor& x : xs) {
    at::Tensor ours = linear_transposed(x, wt, &b), eager = at::linear(x, w, b);
    EXPECT_EQ(ours.sizes(), eager.sizes());
    EXPECT_TRUE(ours.is_contiguous());
    EXPECT_TRUE(at::allclose(ours, eager, 1e-5, 1e-5)) << x.sizes();
    EXPECT_TRUE(at::allclose(linear_transposed(x, wt, nullptr), at::linear(x, w), 1e-5, 1e-5)) << x.sizes();
  }
  // inf and NaN in the input reach the same outputs (a GEMM, not a rewrite of the arithmetic).
  at::Tensor x = at::randn({4, 24});
  x[1][3] = std::numeric_limits<float>::infinity();
  x[2][0] = std::numeric_limits<float>::quiet_NaN();
  at::Tensor ours = linear_transposed(x, wt, &b), eager = at::linear(x, w, b);
  EXPECT_TRUE(at::equal(ours.isnan(), eager.isnan()));
  EXPECT_TRUE(at::equal(ours.isinf(), eager.isinf()));
}

// Two GEMMs summing K products in different orders differ by up to about K ulps of the largest
// product: the absolute tolerance grows with K (randn operands: products of about 1).
bool close_as_gemms(const at::Tensor& a, const at::Tensor& b, int64_t k) {
  return at::allclose(a, b, 1e-4, 1e-6 * static_cast<double>(std::max<int64_t>(k, 10)));
}

// A GEMM against a weight prepared for 6 rows (`prepare(w, bias or null, 6)`), with and without a
// bias, on every leading shape and stride, other row counts, no rows and one row, with K and N off
// every kernel block (1, 17, 1000), against LibTorch's linear; then inf and NaN in the input.
template <typename Linear>
void expect_gemm_matches_libtorch_linear(bool contiguous_output) {
  for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{13, 24}, {1, 17}, {17, 1}, {1000, 70}, {64, 256}}) {
    at::Tensor w = at::randn({n, k}), b = at::randn({n});
    Linear with_bias(w, &b, 6), without(w, nullptr, 6);
    std::vector<at::Tensor> xs = {
        at::randn({6, k}),                     // the prepared rows
        at::randn({2, 3, k}),                  // the same rows as [B, T, C]
        at::randn({2, 2, 5, k}),               // other rows
        at::randn({3, k, 2}).transpose(1, 2),  // strided rows
        at::randn({0, k}),                     // no rows
        at::randn({1, k}),                     // one row
    };
    for (const at::Tensor& x : xs) {
      at::Tensor ours = with_bias(x), eager = at::linear(x, w, b);
      EXPECT_EQ(ours.sizes(), eager.sizes());
      if (contiguous_output) EXPECT_TRUE(ours.is_contiguous());
      EXPECT_TRUE(close_as_gemms(ours, eager, k)) << n << "x" << k << " on " << x.sizes();
      EXPECT_TRUE(close_as_gemms(without(x), at::linear(x, w), k)) << n << "x" << k << " on " << x.sizes();
    }
  }
  at::Tensor w = at::randn({13, 24}), b = at::randn({13});
  at::Tensor x = at::randn({4, 24});
  x[1][3] = std::numeric_limits<float>::infinity();
  x[2][0] = std::numeric_limits<float>::quiet_NaN();
  at::Tensor ours = Linear(w, &b, 4)(x), eager = at::linear(x, w, b);
  EXPECT_TRUE(at::equal(ours.isnan(), eager.isnan()));
  EXPECT_TRUE(at::equal(ours.isinf(), eager.isinf()));
}

// oneDNN's matmul over the packed weight (other row counts get their own primitives over it).
TEST(LinearGemm, OnednnMatmulMatchesLibTorchLinear) {
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN, or TCPROF_ONEDNN=0";
  at::NoGradGuard no_grad;
  at::manual_seed(16);
  expect_gemm_matches_libtorch_linear<OnednnLinear>(true);
  // A prepared linear takes oneDNN's GEMM where it can (MKL's packed copies cost more memory).
  at::Tensor w = at::randn({13, 24}), b = at::randn({13});
  EXPECT_STREQ(PreparedLinear(w, &b, 4).method(), "onednn");
}

// MKL's packed GEMM through LibTorch's mkl:: operators (PyPI's x86 wheels; other row counts run
// LibTorch's linear inside the operator), and the prepared linear's choice of library, forced.
TEST(LinearGemm, MklPackedGemmMatchesLibTorchLinear) {
  if (!MklPackedLinear::available()) GTEST_SKIP() << "this LibTorch has no mkl::_mkl_linear (built without MKL)";
  at::NoGradGuard no_grad;
  at::manual_seed(18);
  expect_gemm_matches_libtorch_linear<MklPackedLinear>(false);
  // TCPROF_LINEAR_GEMM picks the library where it can run.
  at::Tensor w = at::randn({13, 24}), b = at::randn({13});
  for (const char* library : {"onednn", "blas", "mkl"}) {
    ::setenv("TCPROF_LINEAR_GEMM", library, 1);
    PreparedLinear prepared(w, &b, 4);
    const std::string want = std::string(library) == "onednn" && !onednn_layout_enabled() ? "blas" : library;
    EXPECT_EQ(prepared.method(), want);
    at::Tensor x = at::randn({4, 24});
    EXPECT_TRUE(close_as_gemms(prepared(x), at::linear(x, w, b), 24)) << library;
  }
  ::unsetenv("TCPROF_LINEAR_GEMM");
}

// The generated bias + activation pass after a GEMM run without its bias (codegen's
// generate_linear_epilogue), compiled by the real toolchain.
struct GeneratedEpilogue {
  KernelLibraryResult library;
  LinearEpilogueFn fn = nullptr;
  GeneratedEpilogue(const testing::TempDir& dir, int64_t rows, int64_t out_features, WindowKernel::Activation activation) {
    WindowKernel k;
    k.kind = WindowKernel::Kind::LinearGemm;
    k.n = rows, k.out_features = out_features, k.activation = activation;
    KernelLibraryOptions options;
    options.cache_dir = dir.file("cache");
    library = KernelLibraryBuilder(options).compile(std::string(codegen_prelude()) + generate_window_kernel(k, "epilogue"));
    fn = reinterpret_cast<LinearEpilogueFn>(library.library->symbol("epilogue"));
  }
};

// GELU after the GEMM runs in its output pass or in the generated epilogue: its erf and tanh
// forms equal LibTorch's linear then activation, through oneDNN's post-op, MKL's and BLAS's GEMMs
// with the generated epilogue (bias and activation; rows enough for several threads' blocks) and
// the BLAS path's LibTorch pass, on values in GELU's tails and on inf, -inf and NaN outputs
// (GELU(-inf) is eager's NaN).
TEST(LinearGemm, ActivationInTheOutputPassMatchesLinearThenActivation) {
  at::NoGradGuard no_grad;
  using Activation = WindowKernel::Activation;
  at::manual_seed(17);
  testing::TempDir dir;
  at::Tensor w = at::randn({40, 24}) * 2, b = at::randn({40});
  at::Tensor x = at::randn({3000, 24});
  x[1].fill_(3.0f);                                      // large outputs: both tails
  x[2][0] = std::numeric_limits<float>::infinity();      // a column of +-inf
  x[3][5] = -std::numeric_limits<float>::infinity();
  x[4][7] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::pair<Activation, std::function<at::Tensor(const at::Tensor&)>>> cases = {
      {Activation::Gelu, [](const at::Tensor& y) { return at::gelu(y); }},
      {Activation::GeluTanh, [](const at::Tensor& y) { return at::gelu(y, "tanh"); }},
  };
  for (const auto& [activation, eager_activation] : cases) {
    at::Tensor pre = at::linear(x, w, b);
    at::Tensor eager = eager_activation(pre);
    // GELU(+inf) is +inf in LibTorch 1.13 and in 2.11's one-element path, but NaN in 2.11's
    // vectorised erf GELU (its answer for +inf depends on the tensor's length). Where the GEMM gave
    // +inf, either is eager's; everywhere else every inf and NaN must be eager's.
    const at::Tensor plus_inf = pre == std::numeric_limits<float>::infinity(), rest = plus_inf.logical_not();
    at::Tensor prepared = PreparedLinear(w, &b, 3000, activation)(x);
    at::Tensor blas = linear_transposed(x, transposed_weight(w), &b);
    apply_activation(blas, activation);
    std::vector<at::Tensor> ours = {prepared, blas};
    GeneratedEpilogue epilogue(dir, 3000, 40, activation);
    ASSERT_NE(epilogue.fn, nullptr);
    for (const char* library : {"mkl", "blas"}) {
      ::setenv("TCPROF_LINEAR_GEMM", library, 1);
      PreparedLinear with_epilogue(w, &b, 3000, activation, epilogue.fn);
      if (with_epilogue.method() != std::string(library)) continue;  // no MKL in this LibTorch
      ours.push_back(with_epilogue(x));
      at::Tensor no_bias = PreparedLinear(w, nullptr, 3000, activation, epilogue.fn)(x);
      at::Tensor eager_no_bias = eager_activation(at::linear(x, w)), finite = eager_no_bias.isfinite();
      EXPECT_TRUE(at::allclose(no_bias.masked_select(finite), eager_no_bias.masked_select(finite), 1e-4, 1e-5)) << library;
    }
    ::unsetenv("TCPROF_LINEAR_GEMM");
    EXPECT_GE(ours.size(), 3u);
    for (const at::Tensor& y : ours) {
      EXPECT_TRUE(at::equal(y.masked_select(rest).isnan(), eager.masked_select(rest).isnan()))
          << static_cast<int>(activation) << "\n" << y << eager;
      EXPECT_TRUE(at::equal(y.masked_select(rest).isinf(), eager.masked_select(rest).isinf())) << static_cast<int>(activation);
      at::Tensor at_inf = y.masked_select(plus_inf);
      EXPECT_TRUE((at_inf.isposinf() | (at_inf.isnan() & eager.masked_select(plus_inf).isnan())).all().item<bool>())
          << static_cast<int>(activation) << "\n" << at_inf;
      at::Tensor finite = eager.isfinite();
      EXPECT_TRUE(at::allclose(y.masked_select(finite), eager.masked_select(finite), 1e-4, 1e-5)) << static_cast<int>(activation);
    }
  }
}

// The GPT's linears (on [B, T, C]) are planned as GEMMs against prepared weights; each is timed
// against LibTorch's linear, and the output is eager's whichever wins.
TEST(LinearGemm, TransformerLinearsArePlannedAsGemmsAndAutotuned) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("gpt_tiny")), strict_cpp(), nullptr);
  for (const char* spec : {"i64[2,16](0,512)", "i64[2,16](0,512)"}) {
    auto in = inputs_for({spec});
    expect_compiled_matches_eager(m, in);
  }
  std::string ir;
  for (const auto& f : m.frames()) {
    for (const auto& e : f->entries) ir += e->compiled->report().ir;
  }
  // An autotune line per GEMM, naming the library where the GEMM is kept ("n0_linear_gemm (mkl): ..."),
  // and the MLP's GELU in its GEMM.
  auto decided = [&](const std::string& kernel) {
    return ir.find(kernel + ": ") != std::string::npos || ir.find(kernel + " (") != std::string::npos;
  };
  EXPECT_TRUE(decided("_linear_gemm")) << ir;
  EXPECT_TRUE(decided("_linear_gemm_gelu")) << ir;
  EXPECT_NE(ir.find("LibTorch aten::linear"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("extern aten::linear"), std::string::npos) << ir;                 // none left as a plain call
}

// Where MKL's packed GEMM or BLAS runs a linear with GELU after it, the GEMM runs without its bias
// and one generated pass adds the bias and applies GELU (the generated epilogue): the GPT's MLPs
// through it equal eager, and the unit holds the epilogue. Where oneDNN runs it (its post-op
// applies GELU) the unit has none.
TEST(LinearGemm, GeluAfterMklOrBlasRunsInTheGeneratedEpilogue) {
  at::NoGradGuard no_grad;
  ::setenv("TCPROF_AUTOTUNE", "kernels", 1);  // the kernels whatever this machine's timings
  if (onednn_layout_enabled()) {
    ::setenv("TCPROF_LINEAR_GEMM", "onednn", 1);
    CompiledModule m(load_model(sample("gpt_tiny")), strict_cpp(), nullptr);
    expect_compiled_matches_eager(m, inputs_for({"i64[2,16](0,512)"}));
    for (const auto& f : m.frames()) {
      for (const auto& e : f->entries) EXPECT_EQ(e->compiled->report().code.find("linear epilogue"), std::string::npos);
    }
  }
  for (const char* library : {"mkl", "blas"}) {
    if (library == std::string("mkl") && !MklPackedLinear::available()) continue;
    ::setenv("TCPROF_LINEAR_GEMM", library, 1);
    CompiledModule m(load_model(sample("gpt_tiny")), strict_cpp(), nullptr);
    for (const char* spec : {"i64[2,16](0,512)", "i64[2,16](0,512)"}) expect_compiled_matches_eager(m, inputs_for({spec}));
    std::string code, ir;
    for (const auto& f : m.frames()) {
      for (const auto& e : f->entries) code += e->compiled->report().code, ir += e->compiled->report().ir;
    }
    EXPECT_NE(code.find("linear epilogue: bias + gelu over [rows, "), std::string::npos) << library;
    EXPECT_NE(ir.find(std::string("_linear_gemm_gelu (") + library + ")"), std::string::npos) << library << "\n" << ir;
  }
  ::unsetenv("TCPROF_LINEAR_GEMM");
  ::unsetenv("TCPROF_AUTOTUNE");
}

}  // namespace
}  // namespace tcprof
