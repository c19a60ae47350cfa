// The cuda backend pools before the bias adds and ReLUs that feed a max pool (max_pool_first.h):
// which chains move, which stay, and the outputs against eager in emulation.
#include <limits>
#include <string>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>
#include <torch/script.h>

#include "compiler/runtime/output_check.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::expect_compiled_matches_eager;
using testing::inputs_for;
using testing::occurrences;
using testing::strict_cuda;


// Each pool's chain: a convolution's bias (split into an add) and ReLU, moved; a scalar sub, a ReLU
// and a per-channel add, moved; a constant minus x (falling as x grows), a bias varying inside the
// window, an infinite bias, a number infinite in f32 (1e39) and a chain value read twice, all kept
// before their pools, the last but for its ReLU.
std::string save_pool_chains(const std::string& path, c10::ScalarType dtype) {
  at::manual_seed(11);
  auto o = at::TensorOptions().dtype(dtype);
  torch::jit::Module m("PoolChains");
  m.register_parameter("w", at::randn({8, 4, 3, 3}, o), false);
  m.register_parameter("b", at::randn({8}, o), false);
  m.register_buffer("c", at::randn({1, 4, 1, 1}, o));
  m.register_buffer("spatial", at::randn({1, 1, 10, 10}, o));
  at::Tensor inf = at::zeros({4, 1, 1}, o);
  inf[2] = std::numeric_limits<double>::infinity();
  m.register_buffer("inf", inf);
  m.define(R"(
def forward(self, x):
  a = torch.max_pool2d(torch.relu(torch.conv2d(x, self.w, self.b, [1, 1], [1, 1])), [3, 3], [2, 2], [1, 1])
  s = torch.max_pool2d(torch.relu(x - 0.5) + self.c, [2, 2], [2, 2], [0, 0], [1, 1], True)
  r = torch.max_pool2d(self.c - x, [2, 2])
  v = torch.max_pool2d(x + self.spatial, [2, 2])
  i = torch.max_pool2d(x + self.inf, [2, 2])
  j = torch.max_pool2d(x + 1e39, [2, 2])
  h = x + self.c
  t = torch.max_pool2d(torch.relu(h), [3, 3], [1, 1])
  return a, s, r, v, i, j, t, h * 2.0
)");
  m.save(path);
  return path;
}

TEST(MaxPoolFirst, PoolsComeBeforeTheBiasAndReluThatFeedThem) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  CompiledModule m(load_model(save_pool_chains(dir.file("pool_chains.pt"), at::kFloat)), strict_cuda(), nullptr);
  std::vector<c10::IValue> in = inputs_for({"f32[2,4,10,10]"});
  // Infinities and NaNs where the pool takes them: -inf + inf is NaN before a pool, not after it.
  at::Tensor x = in[0].toTensor();
  x[0][2][0][0] = -std::numeric_limits<double>::infinity();
  x[1][1][3][3] = std::numeric_limits<double>::quiet_NaN();
  expect_compiled_matches_eager(m, in);
  // The moved chains give eager's values exactly (the kernels' f32 ops round as eager's do; a
  // zero's sign, which allclose does not see, may differ).
  // Not the convolution's: eager adds its bias inside the convolution, the split bias after it.
  const auto out = m.call(in).toTuple()->elements(), eager = m.call_eager(in).toTuple()->elements();
  for (size_t k : {1, 6}) {
    EXPECT_TRUE(at::allclose(out[k].toTensor(), eager[k].toTensor(), 0.0, 0.0, /*equal_nan=*/true)) << "output " << k;
  }
  EXPECT_TRUE(out[1].toTensor().isnan().any().item<bool>());  // the NaN went through the moved chain
  const std::string ir = testing::totals(m).ir;
  EXPECT_EQ(occurrences(ir, "# max_pool2d before"), 3u) << ir;
  EXPECT_EQ(occurrences(ir, "# max_pool2d before aten::add, aten::relu: they run on its 2x8x5x5 output, not its 2x8x10x10 input"), 1u) << ir;
  EXPECT_EQ(occurrences(ir, "# max_pool2d before aten::sub, aten::relu, aten::add: they run on its 2x4x5x5 output"), 1u) << ir;
  EXPECT_EQ(occurrences(ir, "# max_pool2d before aten::relu: they run on its 2x4x8x8 output"), 1u) << ir;
  // A second batch size recompiles the same way, and still agrees.
  expect_compiled_matches_eager(m, inputs_for({"f32[3,4,10,10]"}));
}

TEST(MaxPoolFirst, Bf16ChainsMoveAndAgreeWithEager) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  CompiledModule m(load_model(save_pool_chains(dir.file("pool_chains_bf16.pt"), at::kBFloat16)), strict_cuda(), nullptr);
  // Within bf16's tolerance: the kernels keep float between ops where eager rounds after each.
  const std::vector<c10::IValue> in = inputs_for({"bf16[2,4,10,10]"});
  c10::IValue out = m.call(in), eager = m.call_eager(in);
  const Comparison c = compare_values(out, eager, nullptr, Tolerance{});
  EXPECT_TRUE(c.ok) << c.problem;
  EXPECT_EQ(occurrences(testing::totals(m).ir, "# max_pool2d before"), 3u) << testing::totals(m).ir;
}

TEST(MaxPoolFirst, AnInPlaceWriteKeepsEveryPoolWhereItWas) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  // With the add after it, the pool would read `a` after the write: the doubled values.
  const std::string path = testing::save_scripted(
      "def forward(self, x):\n"
      "  a = torch.relu(x)\n"
      "  b = a + 1.0\n"
      "  a.mul_(2.0)\n"
      "  return torch.max_pool2d(b, [2, 2]), a * 1.0\n",
      dir.file("pool_in_place.pt"));
  CompiledModule m(load_model(path), strict_cuda(), nullptr);
  expect_compiled_matches_eager(m, inputs_for({"f32[1,3,6,6]"}));
  EXPECT_EQ(occurrences(testing::totals(m).ir, "# max_pool2d before"), 0u) << testing::totals(m).ir;
}

}  // namespace
}  // namespace tcprof
