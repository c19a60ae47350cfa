// Linear layers as GEMMs against a weight prepared at compile time (run/linear_gemm.h,
// run/onednn_linear.h, schedule/plan_linear.h): the transposed copy itself, both GEMMs (oneDNN's
// over a packed weight, OpenBLAS's over a transposed one) against LibTorch's linear on awkward
// shapes and strides, and a compiled model whose linears take that path.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "compiler/backends/cpp/codegen/codegen_cpp.h"
#include "compiler/backends/cpp/run/autotune_cache.h"
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
      if (contiguous_output) {
        EXPECT_TRUE(ours.is_contiguous());
      }
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
    using M = LinearGemmMethod;
    for (M method : {M::OneDnn, M::OneDnnEpilogue, M::Mkl, M::Blas}) {
      const char* name = linear_gemm_method_name(method);
      const bool runs = method == M::Blas || (method == M::Mkl ? MklPackedLinear::available() : onednn_layout_enabled());
      if (!runs) {  // not in this build: asked for, it says so
        EXPECT_THROW(PreparedLinear(w, &b, 3000, activation, epilogue.fn, method), std::runtime_error) << name;
        continue;
      }
      PreparedLinear with_epilogue(w, &b, 3000, activation, epilogue.fn, method);
      EXPECT_STREQ(with_epilogue.method(), name);
      ours.push_back(with_epilogue(x));
      at::Tensor no_bias = PreparedLinear(w, nullptr, 3000, activation, epilogue.fn, method)(x);
      at::Tensor eager_no_bias = eager_activation(at::linear(x, w)), finite = eager_no_bias.isfinite();
      EXPECT_TRUE(at::allclose(no_bias.masked_select(finite), eager_no_bias.masked_select(finite), 1e-4, 1e-5)) << name;
    }
    // The epilogue method needs an epilogue.
    EXPECT_THROW(PreparedLinear(w, &b, 3000, activation, nullptr, M::OneDnnEpilogue), std::runtime_error);
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

// A linear with GELU after it: MKL's packed GEMM and BLAS run without the bias and one generated
// pass adds it and applies GELU (the generated epilogue); oneDNN's matmul does that in its own
// post-op or takes the same epilogue. Every unit holds the epilogue; with each library forced and
// the planned method kept (TCPROF_AUTOTUNE=kernels) the GPT's MLPs equal eager, and the autotune
// lines name the method.
TEST(LinearGemm, GeluAfterTheGemmRunsInTheGeneratedEpilogueOrOnednnsPostOp) {
  at::NoGradGuard no_grad;
  ::setenv("TCPROF_AUTOTUNE", "kernels", 1);  // the kernels whatever this machine's timings
  for (const char* library : {"onednn", "mkl", "blas"}) {
    if (library == std::string("mkl") && !MklPackedLinear::available()) continue;
    if (library == std::string("onednn") && !onednn_layout_enabled()) continue;
    ::setenv("TCPROF_LINEAR_GEMM", library, 1);
    CompiledModule m(load_model(sample("gpt_tiny")), strict_cpp(), nullptr);
    for (const char* spec : {"i64[2,16](0,512)", "i64[2,16](0,512)"}) expect_compiled_matches_eager(m, inputs_for({spec}));
    std::string code, ir;
    for (const auto& f : m.frames()) {
      for (const auto& e : f->entries) code += e->compiled->report().code, ir += e->compiled->report().ir;
    }
    EXPECT_NE(code.find("linear epilogue: bias + gelu over [rows, "), std::string::npos) << library;
    const std::string planned = library == std::string("onednn") ? "onednn+epilogue" : library;
    EXPECT_NE(ir.find("_linear_gemm_gelu (" + planned + ")"), std::string::npos) << library << "\n" << ir;
  }
  ::unsetenv("TCPROF_LINEAR_GEMM");
  ::unsetenv("TCPROF_AUTOTUNE");
}

// The methods each TCPROF_LINEAR_GEMM value lets the autotune phase race, the planned one first:
// unset, oneDNN's two ways (its post-op, the generated epilogue) and MKL only without oneDNN
// (its packed copies cost about 5.7 MB a weight); "fastest", every library this build has.
TEST(LinearGemm, EachSettingRacesItsGemmMethods) {
  using M = LinearGemmMethod;
  const bool onednn = onednn_layout_enabled(), mkl = MklPackedLinear::available();
  auto methods = [](const char* setting, bool epilogue) {
    if (setting == nullptr) ::unsetenv("TCPROF_LINEAR_GEMM");
    else ::setenv("TCPROF_LINEAR_GEMM", setting, 1);
    std::vector<M> out = linear_gemm_methods(epilogue);
    ::unsetenv("TCPROF_LINEAR_GEMM");
    return out;
  };
  const std::vector<M> unset = onednn ? std::vector<M>{M::OneDnnEpilogue, M::OneDnn} : std::vector<M>{mkl ? M::Mkl : M::Blas};
  EXPECT_EQ(methods(nullptr, true), unset);
  EXPECT_EQ(methods(nullptr, false), onednn ? std::vector<M>{M::OneDnn} : unset);
  EXPECT_EQ(methods("blas", true), std::vector<M>{M::Blas});
  EXPECT_EQ(methods("mkl", true), std::vector<M>{mkl ? M::Mkl : M::Blas});
  std::vector<M> fastest;
  if (onednn) fastest = {M::OneDnnEpilogue, M::OneDnn};
  if (mkl) fastest.push_back(M::Mkl);
  fastest.push_back(M::Blas);
  EXPECT_EQ(methods("fastest", true), fastest);
  EXPECT_EQ(methods("no such library", true), std::vector<M>{M::Blas});
}

// Autotuned (no forced decision), a GEMM + GELU races its methods: the autotune line gives each
// one's time and the kept GEMM names the winner; the output is eager's, and a warm start reads the
// same decision, method included, from the autotune cache.
TEST(LinearGemm, TheGemmMethodsAreRacedAndTheWinnerIsCached) {
  at::NoGradGuard no_grad;
  ::setenv("TCPROF_LINEAR_GEMM", "fastest", 1);
  testing::TempDir dir;
  CompileOptions options = strict_cpp();
  options.kernel_cache_dir = dir.file("cache");
  auto autotune_lines = [&] {
    CompiledModule m(load_model(sample("gpt_tiny")), options, nullptr);
    expect_compiled_matches_eager(m, inputs_for({"i64[2,16](0,512)"}));
    std::string ir;
    for (const auto& f : m.frames()) {
      for (const auto& e : f->entries) ir += e->compiled->report().ir;
    }
    return ir.substr(std::min(ir.size(), ir.find("\nautotune (")));
  };
  const std::string first = autotune_lines(), second = autotune_lines();
  ::unsetenv("TCPROF_LINEAR_GEMM");
  EXPECT_NE(first.find("; GEMM methods: "), std::string::npos) << first;
  EXPECT_NE(first.find("blas "), std::string::npos) << first;  // every library raced, BLAS included
  EXPECT_EQ(first.find("read from the autotune cache"), std::string::npos) << first;
  EXPECT_NE(second.find("read from the autotune cache"), std::string::npos) << second;
  EXPECT_EQ(second.substr(second.find(":\n")), first.substr(first.find(":\n")));
}

// The autotune cache keeps each decision's GEMM method and the methods' times; a file of the
// previous format is stale (re-timed), as is a line with a method count it cannot hold.
TEST(LinearGemm, AutotuneFilesKeepTheGemmMethods) {
  testing::TempDir dir;
  AutotuneChoice raced{true, 4000, 9000, false, 0.01, 0.015, 0.02};
  raced.gemm_method = static_cast<int>(LinearGemmMethod::OneDnnEpilogue);
  raced.gemm_times = {{1, 4000, 0.01}, {0, 4600, 0.02}};
  AutotuneChoice plain{true, 120500, 98000, true, 0.012, 0.02, 0.02};
  const std::string key = autotune_key("linear gemm test");
  ASSERT_TRUE(store_autotune(dir.path().string(), key, {raced, plain, AutotuneChoice{}}));
  auto back = load_autotune(dir.path().string(), key, 3);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ((*back)[0].gemm_method, 1);
  ASSERT_EQ((*back)[0].gemm_times.size(), 2u);
  EXPECT_EQ((*back)[0].gemm_times[1].method, 0);
  EXPECT_EQ((*back)[0].gemm_times[1].ns, 4600);
  EXPECT_EQ((*back)[1].gemm_method, -1);
  EXPECT_TRUE((*back)[1].use_libtorch);
  EXPECT_TRUE((*back)[1].gemm_times.empty());
  EXPECT_FALSE((*back)[2].measured);
  const std::string file = dir.path().string() + "/autotune/" + key.substr(0, 2) + "/" + key + ".txt";
  std::ofstream(file) << "tcprof-autotune 2\n4000 9000 kernel 0.01 0.015 0.02\n";
  EXPECT_FALSE(load_autotune(dir.path().string(), key, 1).has_value());
  std::ofstream(file) << "tcprof-autotune 3\n4000 9000 kernel 0.01 0.015 0.02 1 99999999999\n";
  EXPECT_FALSE(load_autotune(dir.path().string(), key, 1).has_value());
}

}  // namespace
}  // namespace tcprof
