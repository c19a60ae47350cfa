// Matrix products of two values of the graph through oneDNN's matmul (run/onednn_gemm.h,
// schedule/plan_gemm.h): the call itself against LibTorch's on the strides training graphs hand it
// (transposed weights and gradients, attention's q and k as views of one projection, size-1
// dimensions) and what it refuses. The training graphs that plan their GEMMs this way:
// training_graph_test.cpp.
#include <array>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "compiler/backends/cpp/run/onednn_gemm.h"
#include <fmt/format.h>
#include <gtest/gtest.h>

namespace tcprof {
namespace {

void expect_close(const std::optional<at::Tensor>& got, const at::Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.has_value()) << what << ": oneDNN refused it";
  ASSERT_EQ(got->sizes(), want.sizes()) << what;
  EXPECT_TRUE(got->is_contiguous()) << what;
  const double scale = want.abs().max().item<double>() + 1e-30;
  EXPECT_LE((*got - want).abs().max().item<double>() / scale, 2e-6) << what;
}

TEST(OnednnGemm, MatchesLibTorchOnTransposedOperandsBiasAndOddSizes) {
  if (!onednn_gemm_available()) GTEST_SKIP() << "built without oneDNN, or TCPROF_ONEDNN=0";
  at::manual_seed(7);
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{64, 32, 48}, {17, 13, 5}, {1, 9, 7}, {8, 1, 3}, {5, 6, 1}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const at::Tensor a = ta ? at::randn({k, m}).t() : at::randn({m, k});
        const at::Tensor b = tb ? at::randn({n, k}).t() : at::randn({k, n});
        const at::Tensor bias = at::randn({n});
        const std::string what = fmt::format("{}x{}x{} a{} b{}", m, k, n, ta ? "ᵀ" : "", tb ? "ᵀ" : "");
        expect_close(onednn_gemm(a, b, nullptr), at::mm(a, b), what);
        expect_close(onednn_gemm(a, b, &bias), at::addmm(bias, a, b), what + " + bias");
      }
    }
  }
}

TEST(OnednnGemm, BatchedProductsReadAttentionsViewsWhereTheyLie) {
  if (!onednn_gemm_available()) GTEST_SKIP() << "built without oneDNN, or TCPROF_ONEDNN=0";
  at::manual_seed(8);
  // The GPT's q, k, v: [B, T, 3C] split, viewed [B, T, H, D] and transposed to [B, H, T, D].
  const int64_t B = 2, T = 16, H = 4, D = 8, C = H * D;
  const at::Tensor qkv = at::randn({B, T, 3 * C});
  auto heads = [&](int64_t part) { return qkv.narrow(2, part * C, C).view({B, T, H, D}).transpose(1, 2); };
  const at::Tensor q = heads(0), key = heads(1), v = heads(2);
  expect_close(onednn_gemm(q, key.transpose(-2, -1), nullptr), at::matmul(q, key.transpose(-2, -1)), "q @ kᵀ");
  const at::Tensor p = at::softmax(at::randn({B, H, T, T}), -1);
  expect_close(onednn_gemm(p, v, nullptr), at::matmul(p, v), "p @ v");
  expect_close(onednn_gemm(p.transpose(-2, -1), v, nullptr), at::matmul(p.transpose(-2, -1), v), "pᵀ @ v");
  // A batch of one, and a size-1 head dimension with an arbitrary stride.
  const at::Tensor one = at::randn({1, 1, T, D}), other = at::randn({1, 1, D, T});
  expect_close(onednn_gemm(one, other, nullptr), at::matmul(one, other), "batch of one");
  const at::Tensor a3 = at::randn({3, 5, 4}), b3 = at::randn({3, 4, 2});
  expect_close(onednn_gemm(a3, b3, nullptr), at::bmm(a3, b3), "bmm");
}

TEST(OnednnGemm, RefusesWhatItCannotComputeSoLibTorchRunsIt) {
  if (!onednn_gemm_available()) GTEST_SKIP() << "built without oneDNN, or TCPROF_ONEDNN=0";
  const at::Tensor a = at::randn({4, 3}), b = at::randn({3, 5}), bias = at::randn({5});
  EXPECT_FALSE(onednn_gemm(a.to(at::kDouble), b.to(at::kDouble), nullptr)) << "f64";
  EXPECT_FALSE(onednn_gemm(a, at::randn({4, 5}), nullptr)) << "inner sizes differ";
  EXPECT_FALSE(onednn_gemm(at::randn({2, 4, 3}), at::randn({1, 3, 5}), nullptr)) << "a broadcast batch";
  EXPECT_FALSE(onednn_gemm(at::randn({2, 4, 3}), at::randn({2, 3, 5}), &bias)) << "a batched bias";
  EXPECT_FALSE(onednn_gemm(at::randn({0, 3}), b, nullptr)) << "no rows";
  EXPECT_FALSE(onednn_gemm(at::randn({1, 3}).expand({4, 3}), b, nullptr)) << "an expanded operand";
  const at::Tensor wrong_bias = at::randn({4});
  EXPECT_FALSE(onednn_gemm(a, b, &wrong_bias)) << "bias of another size";
}

}  // namespace

// oneDNN generates its GEMM code at the first GEMM a process executes (25-90 ms on the 2-core
// EPYC). After warm_onednn_gemm (which compiling a graph with a oneDNN GEMM calls) a user's first
// GEMM is as quick as any other: without it, a warm start's first call paid the code generation
// and the run's profile blamed that kernel for most of its time. ctest runs each test in a process
// of its own, so this is the process's first GEMM. It runs on one thread, timed in that thread's
// CPU time: the code generation is CPU work, while with two threads on a loaded machine (a parallel
// ctest beside a build) the GEMM's wall time, and even the process's CPU time, grew past 10 ms with
// OpenMP's threads waiting, spinning, for one another (0.4-1.6 ms when quiet).
namespace {
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}
}  // namespace

TEST(OnednnGemm, WarmingGeneratesTheCodeBeforeTheFirstGemm) {
  if (!onednn_gemm_available()) GTEST_SKIP() << "built without oneDNN, or TCPROF_ONEDNN=0";
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const double t0 = thread_cpu_ms();
  warm_onednn_gemm();
  const double warm_ms = thread_cpu_ms() - t0;
  at::manual_seed(5);
  const at::Tensor a = at::randn({2, 4, 13, 16}), b = at::randn({2, 4, 16, 13});
  const double t1 = thread_cpu_ms();
  std::optional<at::Tensor> y = onednn_gemm(a, b, nullptr);
  const double first_ms = thread_cpu_ms() - t1;
  const double t2 = thread_cpu_ms();
  warm_onednn_gemm();  // once per process
  const double again_ms = thread_cpu_ms() - t2;
  at::set_num_threads(threads);
  ASSERT_TRUE(y.has_value());
  EXPECT_TRUE(at::allclose(*y, at::matmul(a, b), 1e-4, 1e-5));
  EXPECT_LT(first_ms, 10.0) << "the first GEMM after warming took " << first_ms << " ms of CPU time (warming took "
                            << warm_ms << " ms): oneDNN generated its code in the user's call";
  EXPECT_LT(again_ms, 1.0);
}

}  // namespace tcprof
