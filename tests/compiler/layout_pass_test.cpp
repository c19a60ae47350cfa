// The layout pass (schedule/plan_onednn_layout.h): convolution chains in oneDNN's blocked layout
// with prepacked weights and fused post-ops, checked against eager LibTorch on the conv_chains
// sample (every pattern the pass handles, each where it is hardest) and on MobileNetV2 and
// ResNet18, and what `explain` reports of it. Built without oneDNN's headers, the pass plans
// nothing and these tests check that convolutions still match eager.
#include <cmath>
#include <limits>
#include <optional>

#include <ATen/core/grad_mode.h>
#include <nlohmann/json.hpp>

#include "compiler/backends/cpp/run/onednn_convolution.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::expect_compiled_matches_eager;
using testing::expect_same_output;
using testing::inputs_for;
using testing::occurrences;
using testing::run_command;
using testing::sample;
using testing::strict_cpp;


// Every graph's layout report, merged; and the IR of all graphs.
struct Layouts {
  LayoutReport total;
  std::string ir;
  int64_t fallbacks = 0;
};

Layouts layouts(const CompiledModule& m) {
  Layouts l;
  for (const auto& f : m.frames()) {
    for (const auto& e : f->entries) {
      const CompileReport& r = e->compiled->report();
      EXPECT_FALSE(r.compile_failed) << r.failure;
      l.ir += r.ir;
      if (!r.layout) continue;
      l.total.convolutions += r.layout->convolutions;
      l.total.post_ops += r.layout->post_ops;
      l.total.channel_ops += r.layout->channel_ops;
      l.total.blocked_values += r.layout->blocked_values;
      l.total.winograd += r.layout->winograd;
      l.total.reorders.insert(l.total.reorders.end(), r.layout->reorders.begin(), r.layout->reorders.end());
    }
  }
  return l;
}

// Each chain layout the autotune may pick (TCPROF_CHAIN_FORMAT forces one), through eager.
class ChainFormats : public ::testing::TestWithParam<const char*> {};

TEST_P(ChainFormats, ConvChainsMatchEager) {
  at::NoGradGuard no_grad;
  setenv("TCPROF_CHAIN_FORMAT", GetParam(), 1);
  CompiledModule m(load_model(sample("conv_chains")), strict_cpp(), nullptr);
  for (int64_t call = 0; call < 2; ++call) {
    auto in = inputs_for({"f32[2,3,33,33]"}, call);
    expect_compiled_matches_eager(m, in);
  }
  auto nan_in = inputs_for({"f32[2,3,33,33]"});
  nan_in[0].toTensor()[1][0][9][4] = std::numeric_limits<float>::quiet_NaN();
  expect_compiled_matches_eager(m, nan_in);
  unsetenv("TCPROF_CHAIN_FORMAT");
  const std::string chosen = std::string(GetParam()) == "any" ? "oneDNN's choice" : GetParam();
  if (onednn_layout_enabled()) {
    EXPECT_NE(layouts(m).ir.find("-> " + chosen), std::string::npos) << layouts(m).ir;
  }
}

INSTANTIATE_TEST_SUITE_P(EachLayout, ChainFormats, ::testing::Values("any", "nChw16c", "nChw8c", "nChw16c+winograd"),
                         [](const auto& info) {
                           const std::string p = info.param;
                           return p == "any" ? std::string("OneDnnsChoice") : p == "nChw16c+winograd" ? std::string("Winograd") : p;
                         });

// Forces one chain format for the lifetime of a test.
struct ForcedChainFormat {
  explicit ForcedChainFormat(const char* f) { setenv("TCPROF_CHAIN_FORMAT", f, 1); }
  ~ForcedChainFormat() { unsetenv("TCPROF_CHAIN_FORMAT"); }
};

// A max pool that leaves each channel a 1x1 image, after a convolution on the chain's buffer:
// there the pooled values are laid out as NCHW's in any layout, and the NCHW result handed to the
// graph was a view of the chain's buffer, not a copy, read after the buffer was freed (garbage in
// every element; found by fuzz_graphs with a ReLU after its convolutions). The convolution's own
// output is returned too, which the chain also keeps.
TEST(LayoutPass, AMaxPoolToOnePixelAfterAConvolutionOwnsItsResult) {
  at::NoGradGuard no_grad;
  at::manual_seed(20261202);
  torch::jit::Module module("PoolToOnePixel");
  module.register_parameter("w", at::randn({16, 10, 1, 5}) * 0.2, false);
  module.define(
      "def forward(self, x):\n"
      "  y = torch.relu(torch.conv2d(x, self.w, None, [1, 1], [0, 1], [1, 1], 1))\n"
      "  return torch.max_pool2d(y, [2, 1], [2, 1], [0, 0], [1, 1], False), y\n");
  testing::TempDir dir;
  module.save(dir.file("pool_to_one_pixel.pt"));
  for (const char* format : {"any", "nChw16c", "nChw8c"}) {
    SCOPED_TRACE(format);
    ForcedChainFormat forced(format);
    CompiledModule m(load_model(dir.file("pool_to_one_pixel.pt")), strict_cpp(), nullptr);
    for (const std::string batch : {"1", "2", "16"}) {
      for (int64_t call = 0; call < 2; ++call) expect_compiled_matches_eager(m, inputs_for({"f32[" + batch + ",10,2,3]"}, call));
    }
    if (onednn_layout_enabled()) {
      EXPECT_GE(layouts(m).total.channel_ops, 1) << layouts(m).ir;  // the pool runs on the chain
    }
  }
}

// Winograd's transforms add up to 16-36 source values per tile: an inf there becomes inf - inf =
// NaN over the whole output tile, where eager's direct convolution keeps +-inf in the 3x3
// neighbourhood (and NaN only where signs meet). Such sources go through the direct algorithm, so
// eager's inf and NaN come out where eager has them: an inf, a -inf, a NaN, a huge finite value.
TEST(LayoutPass, WinogradLeavesSourcesWithInfOrNaNToTheDirectAlgorithm) {
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers";
  at::NoGradGuard no_grad;
  OnednnConv c;
  c.name = "d0_conv";
  c.n = 1, c.c = 16, c.h = 20, c.w = 20, c.oc = 32, c.oh = 20, c.ow = 20, c.kh = 3, c.kw = 3, c.ph = 1, c.pw = 1;
  at::Tensor w = at::rand({32, 16, 3, 3}) + 0.1, b = at::randn({32});  // positive: an inf stays inf
  OnednnConvolution conv(c, w, b, ChainFormat::Blocked16Winograd);
  if (!conv.winograd()) GTEST_SKIP() << "this oneDNN has no float Winograd convolution for this CPU";
  for (float special : {0.f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN(), 3e37f}) {
    at::Tensor x = at::randn({1, 16, 20, 20});
    if (special != 0.f) x[0][5][10][10] = special;
    at::Tensor y;
    ASSERT_TRUE(conv.run(nullptr, &x, nullptr, nullptr, false, nullptr, &y));
    expect_same_output(y, at::conv2d(x, w, b, 1, 1));
  }
}

// A NaN in a step's input reaches its output where eager's convolution puts it, through every
// fused activation and in every chain layout. oneDNN's reference convolution, which it runs where
// it has no kernel for a layout on this CPU (nChw16c without AVX-512), computed sigmoid(NaN) as 0;
// such a step now takes oneDNN's own layout choice instead.
TEST(LayoutPass, EveryActivationKeepsNaNInEveryLayout) {
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers";
  at::NoGradGuard no_grad;
  at::manual_seed(20261128);
  using Act = OnednnConv::Activation;
  const std::pair<Act, at::Tensor (*)(const at::Tensor&)> activations[] = {
      {Act::None, [](const at::Tensor& y) { return y; }},
      {Act::Relu, [](const at::Tensor& y) { return at::relu(y); }},
      {Act::Sigmoid, [](const at::Tensor& y) { return at::sigmoid(y); }},
      {Act::Tanh, [](const at::Tensor& y) { return at::tanh(y); }},
      {Act::Gelu, [](const at::Tensor& y) { return at::gelu(y); }},
      {Act::Silu, [](const at::Tensor& y) { return at::silu(y); }},
      {Act::Hardswish, [](const at::Tensor& y) { return at::hardswish(y); }},
  };
  for (int f = 0; f < kChainFormats; ++f) {
    for (const auto& [act, eager_act] : activations) {
      for (int64_t k : {1, 3}) {
        SCOPED_TRACE(::testing::Message() << chain_format_name(static_cast<ChainFormat>(f)) << ", activation "
                                          << static_cast<int>(act) << ", " << k << "x" << k);
        OnednnConv c;
        c.name = "d0_conv";
        c.n = 2, c.c = 32, c.h = 16, c.w = 16, c.oc = 32, c.oh = 16, c.ow = 16, c.kh = c.kw = k, c.ph = c.pw = k / 2;
        c.activation = act;
        at::Tensor w = at::randn({32, 32, k, k}) * 0.2, b = at::randn({32});
        OnednnConvolution conv(c, w, b, static_cast<ChainFormat>(f));
        at::Tensor x = at::randn({2, 32, 16, 16});
        x[1][3][7][9] = std::numeric_limits<float>::quiet_NaN();
        at::Tensor y;
        ASSERT_TRUE(conv.run(nullptr, &x, nullptr, nullptr, false, nullptr, &y));
        const at::Tensor expected = eager_act(at::conv2d(x, w, b, 1, k / 2));
        EXPECT_TRUE(at::equal(at::isnan(y), at::isnan(expected)))
            << at::isnan(y).sum().item<int64_t>() << " NaN against eager's " << at::isnan(expected).sum().item<int64_t>();
        EXPECT_TRUE(at::allclose(y, expected, 1e-4, 1e-5, /*equal_nan=*/true));
      }
    }
  }
}

// Winograd on random shapes (batch, channels, odd sizes, padding 0 or 1, with and without bias)
// against LibTorch's convolution: every shape it takes must give eager's result within the tolerance.
TEST(LayoutPass, WinogradMatchesEagerOnRandomShapes) {
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers";
  at::NoGradGuard no_grad;
  at::manual_seed(20261125);
  int winograd = 0;
  for (int i = 0; i < 16; ++i) {
    auto pick = [](std::initializer_list<int64_t> v) { return v.begin()[at::randint(0, static_cast<int64_t>(v.size()), {1}).item<int64_t>()]; };
    OnednnConv c;
    c.name = "d0_conv";
    c.n = pick({1, 2}), c.c = pick({16, 32, 64}), c.oc = pick({16, 48, 64});
    c.h = at::randint(14, 41, {1}).item<int64_t>(), c.w = at::randint(14, 41, {1}).item<int64_t>();
    c.kh = c.kw = 3, c.ph = c.pw = pick({0, 1});
    c.oh = c.h + 2 * c.ph - 2, c.ow = c.w + 2 * c.pw - 2;
    at::Tensor w = at::randn({c.oc, c.c, 3, 3}) / std::sqrt(9.0 * static_cast<double>(c.c));
    std::optional<at::Tensor> b;
    if (i % 2 == 0) b = at::randn({c.oc});
    OnednnConvolution conv(c, w, b, ChainFormat::Blocked16Winograd);
    winograd += conv.winograd();
    at::Tensor x = at::randn({c.n, c.c, c.h, c.w}), y;
    ASSERT_TRUE(conv.run(nullptr, &x, nullptr, nullptr, false, nullptr, &y));
    SCOPED_TRACE(::testing::Message() << c.n << "x" << c.c << "x" << c.h << "x" << c.w << " -> " << c.oc << " pad " << c.ph);
    expect_same_output(y, at::conv2d(x, w, b ? *b : at::Tensor(), 1, c.ph));
  }
  if (winograd == 0) GTEST_SKIP() << "this oneDNN has no float Winograd convolution for this CPU (direct: checked)";
  EXPECT_GE(winograd, 8);  // the outputs smaller than 14x14 stay direct
}

// ResNet18's ten 3x3 stride-1 convolutions on 14x14 outputs or more through Winograd: its logits' error against a
// float64 run of the same model stays of the size of eager's own float32 error (measured: 1.5-1.9e-6
// against eager's 1.0-1.2e-6; the direct algorithm with folded batch norm, 1.3-1.9e-6).
TEST(LayoutPass, WinogradIsAsAccurateAsEagerAgainstFloat64) {
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers";
  at::NoGradGuard no_grad;
  ForcedChainFormat forced("nChw16c+winograd");
  CompiledModule m(load_model(sample("resnet18")), strict_cpp(), nullptr);
  LoadedModel reference = load_model(sample("resnet18"));
  reference.module.to(at::kDouble);
  for (int64_t call = 0; call < 3; ++call) {
    auto in = inputs_for({"f32[1,3,224,224]"}, call);
    at::Tensor ours = m.call(in).toTensor(), eager = m.call_eager(in).toTensor();
    expect_same_output(ours, eager);
    at::Tensor exact = reference.module.forward({in[0].toTensor().to(at::kDouble)}).toTensor();
    const double ours_error = (ours.to(at::kDouble) - exact).abs().max().item<double>();
    const double eager_error = (eager.to(at::kDouble) - exact).abs().max().item<double>();
    EXPECT_LE(ours_error, 3 * eager_error + 1e-7) << "call " << call << ": eager's error " << eager_error;
  }
  Layouts l = layouts(m);
  if (l.total.winograd == 0) GTEST_SKIP() << "this oneDNN has no float Winograd convolution for this CPU (direct: checked)";
  EXPECT_EQ(l.total.winograd, 4 + 3 + 3) << l.ir;  // layer1 to layer3; layer4's 7x7 ones stay direct
  EXPECT_NE(l.ir.find("-> nChw16c+winograd"), std::string::npos) << l.ir;
}

TEST(LayoutPass, ConvChainsMatchEagerAtEveryPatternAndAnotherBatch) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("conv_chains")), strict_cpp(), nullptr);
  for (int64_t call = 0; call < 3; ++call) {
    auto in = inputs_for({"f32[2,3,33,33]"}, call);
    expect_compiled_matches_eager(m, in);
  }
  // NaN flows through the fused activations as LibTorch's own ops let it (relu6, gelu, ...).
  auto nan_in = inputs_for({"f32[2,3,33,33]"});
  nan_in[0].toTensor()[0][1][5][7] = std::numeric_limits<float>::quiet_NaN();
  expect_compiled_matches_eager(m, nan_in);
  // Another batch: a recompile, or (dynamic batch) each step sees other shapes than it was built
  // for and runs through LibTorch. Either way the answer is eager's.
  for (const char* spec : {"f32[3,3,33,33]", "f32[1,3,17,21]"}) {
    auto in = inputs_for({spec});
    expect_compiled_matches_eager(m, in);
  }
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers: the layout pass plans nothing";
  Layouts l = layouts(m);
  EXPECT_GT(l.total.convolutions, 0);
  // The residual that is the conv's own input, the add read again later, the downsample branch.
  EXPECT_NE(l.ir.find("[aten::conv2d, aten::add, aten::relu]"), std::string::npos) << l.ir;
  EXPECT_NE(l.ir.find("(written over)"), std::string::npos) << "ResNet's main branch is the sum's last reader\n" << l.ir;
  for (const char* act : {"aten::hardswish", "aten::silu", "aten::relu6", "aten::sigmoid", "aten::gelu"}) {
    EXPECT_NE(l.ir.find(std::string(", ") + act + "]"), std::string::npos) << act << " is not a post-op\n" << l.ir;
  }
  // The tanh reads head(p) * 0.5, not the convolution: it stays outside.
  EXPECT_EQ(l.ir.find("[aten::conv2d, aten::tanh]"), std::string::npos) << l.ir;
  // Squeeze-and-excitation: the depthwise step pools its own output and the projection scales its
  // input, so the activation never leaves the chain for either.
  EXPECT_NE(l.ir.find("aten::relu6, aten::adaptive_avg_pool2d]"), std::string::npos) << l.ir;
  EXPECT_NE(l.ir.find("[aten::mul, aten::conv2d]"), std::string::npos) << l.ir;
  // The fire module: both 4-D cats and both max pools run on the chain's buffers, in each graph
  // that has it (the cat read densely too, the second pool's output leaving the chain).
  const size_t pools = occurrences(l.ir, "= aten::max_pool2d(");  // two in each such graph, two 4-D cats too
  EXPECT_GT(pools, 0u) << l.ir;
  EXPECT_EQ(l.total.channel_ops, static_cast<int>(2 * pools)) << l.ir;
  EXPECT_EQ(occurrences(l.ir, "[aten::cat]"), pools) << l.ir;
  EXPECT_EQ(occurrences(l.ir, "[aten::max_pool2d]"), pools) << l.ir;
  EXPECT_NE(l.ir.find("[aten::cat]: %39, %41 blocked -> %42 blocked+dense"), std::string::npos) << l.ir;
  EXPECT_NE(l.ir.find("[aten::max_pool2d]: %47 blocked -> %48 dense"), std::string::npos) << l.ir;
  for (const auto& r : l.total.reorders) {
    EXPECT_EQ(r.find("for aten::adaptive_avg_pool2d"), std::string::npos) << r;
    if (r.find("mul_conv") != std::string::npos) {
      EXPECT_EQ(r.find("from aten::mul"), std::string::npos) << r;
    }
  }
}

// EfficientNet-B0's 16 squeeze-and-excitation blocks run inside the chain: each expanded activation
// is pooled by the step that makes it and scaled by the projection that reads it, where it used to
// leave oneDNN's layout for both and come back (65 reorders, 33 of them whole activations).
TEST(LayoutPass, EfficientNetKeepsItsSqueezeAndExcitationInTheChain) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("efficientnet_b0")), strict_cpp(), nullptr);
  auto in = inputs_for({"f32[1,3,224,224]"});
  expect_compiled_matches_eager(m, in);
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers";
  Layouts l = layouts(m);
  EXPECT_EQ(l.total.convolutions, 81);
  EXPECT_EQ(occurrences(l.ir, "[aten::mul, aten::conv2d"), 16u) << l.ir;
  EXPECT_EQ(occurrences(l.ir, "aten::adaptive_avg_pool2d]"), 17u) << l.ir;  // and the classifier's pool
  for (const auto& r : l.total.reorders) {
    EXPECT_EQ(r.find("for aten::adaptive_avg_pool2d"), std::string::npos) << r;
    EXPECT_EQ(r.find("from aten::mul"), std::string::npos) << r;
  }
}

// SqueezeNet's fire modules concatenate two convolutions' outputs, and max pools sit between them:
// both run on the chain's buffers, so the only reorder left is the image going in (there were 27:
// every expand convolution's output left the chain for the cat, and every cat and pool came back).
TEST(LayoutPass, SqueezeNetConcatenatesAndPoolsOnTheChainsBuffers) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("squeezenet1_1")), strict_cpp(), nullptr);
  auto in = inputs_for({"f32[2,3,224,224]"});
  expect_compiled_matches_eager(m, in);
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers";
  Layouts l = layouts(m);
  EXPECT_EQ(l.total.convolutions, 26);
  EXPECT_EQ(l.total.channel_ops, 8 + 3) << l.ir;
  EXPECT_EQ(occurrences(l.ir, "[aten::cat]"), 8u) << l.ir;
  EXPECT_EQ(occurrences(l.ir, "[aten::max_pool2d]"), 3u) << l.ir;
  EXPECT_LE(l.total.reorders.size(), 1u) << l.ir;
}

// MobileNetV2 is one chain: its 52 convolutions (17 depthwise) hand blocked values to each other,
// every batch norm, ReLU6 and residual add is fused, the last step pools its own output for the
// classifier, and the only reorder left is the image going in (when the stem's primitive does not
// read NCHW).
TEST(LayoutPass, MobileNetV2IsOneChainWithReordersOnlyAtItsEnds) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("mobilenet_v2")), strict_cpp(), nullptr);
  auto in = inputs_for({"f32[1,3,224,224]"});
  expect_compiled_matches_eager(m, in);
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers";
  Layouts l = layouts(m);
  EXPECT_EQ(l.total.convolutions, 52);
  EXPECT_EQ(l.total.post_ops, 35 + 10 + 1);  // 35 ReLU6, 10 residual adds, the pool
  EXPECT_LE(l.total.reorders.size(), 1u) << l.ir;
  EXPECT_GE(l.total.blocked_values, 51 + 10 - 2);
  EXPECT_EQ(l.ir.find("batch_norm"), std::string::npos);
}

// ResNet18: each residual add (and the ReLU after it) runs as post-ops of a convolution; with a
// downsample branch, of the downsample convolution, which runs after the main branch.
TEST(LayoutPass, ResNet18FusesEveryResidualAddIntoAConvolution) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("resnet18")), strict_cpp(), nullptr);
  auto in = inputs_for({"f32[1,3,224,224]"});
  expect_compiled_matches_eager(m, in);
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers";
  Layouts l = layouts(m);
  EXPECT_EQ(l.total.convolutions, 20);
  EXPECT_EQ(occurrences(l.ir, "aten::add, aten::relu"), 8u) << l.ir;
  EXPECT_EQ(l.ir.find("aten::add ->"), std::string::npos);  // no add left as its own step
}

// ConvNeXt hands its convolutions channels-last values (a layer norm between two permutes) and
// eager writes their outputs channels-last too: the steps read and write that memory as it is,
// so every convolution joins the chain (the 18 depthwise and 3 downsampling ones ran as LibTorch
// calls, which reordered the weights and copied the inputs on every call; the last downsample
// took 6.7 ms of a 90 ms call, 1.4 ms as a step).
TEST(LayoutPass, ConvNeXtsChannelsLastConvolutionsRunAsStepsWithoutACopy) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("convnext_tiny")), strict_cpp(), nullptr);
  auto in = inputs_for({"f32[1,3,224,224]"});
  expect_compiled_matches_eager(m, in);
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers";
  Layouts l = layouts(m);
  EXPECT_EQ(l.total.convolutions, 22);
  // Every output but the stem's is dense channels-last (the three downsamples' blocked too, for
  // the next block's depthwise convolution), and so is every input but the image and those three.
  EXPECT_EQ(occurrences(l.ir, "dense nhwc ("), 21u + 18u) << l.ir;
  // With 3 values passed in the chain's layout, the layout is not raced (2.5 s of a cold compile
  // for layouts within 3% of each other): oneDNN's choice stays.
  EXPECT_EQ(l.ir.find("chain layout ("), std::string::npos) << l.ir;
  for (const auto& r : l.total.reorders) {  // only the stem's output is NCHW in eager
    if (r.find("-> nchw") != std::string::npos) {
      EXPECT_NE(r.find("out of d0_conv"), std::string::npos) << r;
    }
  }
}

// The chain's layout is autotuned (oneDNN's per-primitive choice against nChw16c and nChw8c, over
// whole runs of the graph), recorded in the IR, and read from the autotune cache by the next
// compile; the user's inputs are not touched by the timing runs.
TEST(LayoutPass, TheChainLayoutIsTimedOnceAndThenReadFromTheCache) {
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers";
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  CompileOptions o = strict_cpp();
  o.kernel_cache_dir = dir.file("cache");
  auto in = inputs_for({"f32[1,3,224,224]"});
  at::Tensor before = in[0].toTensor().clone();
  auto chain_line = [&] {
    CompiledModule m(load_model(sample("mobilenet_v2")), o, nullptr);
    expect_compiled_matches_eager(m, in);
    std::string ir = layouts(m).ir;
    size_t at = ir.find("chain layout (");
    return at == std::string::npos ? std::string() : ir.substr(at, ir.find('\n', at) - at);
  };
  std::string first = chain_line();
  ASSERT_FALSE(first.empty());
  for (const char* format : {"oneDNN's choice", "nChw16c", "nChw8c", "nChw16c+winograd"}) EXPECT_NE(first.find(format), std::string::npos) << first;
  EXPECT_EQ(first.find("read from the autotune cache"), std::string::npos) << first;
  std::string second = chain_line();
  EXPECT_NE(second.find("read from the autotune cache"), std::string::npos) << second;
  EXPECT_EQ(second.substr(second.find("):")), first.substr(first.find("):")));
  EXPECT_TRUE(at::equal(in[0].toTensor(), before));
}

// `explain` shows the chains and where reorders remain, in text and JSON.
TEST(LayoutPass, ExplainShowsTheLayoutAndEveryReorder) {
  if (!onednn_layout_enabled()) GTEST_SKIP() << "built without oneDNN's headers";
  const std::string explain = std::string(TCPROF_BIN) + " explain " + sample("mobilenet_v2") + " --input float32[1,3,224,224]";
  auto text = run_command(explain);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("layout: 52 convolutions in oneDNN's"), std::string::npos) << text.output;
  // conv_chains keeps reorders: a value scaled by a scalar mean and read by two convolutions.
  auto chains = run_command(std::string(TCPROF_BIN) + " explain " + sample("conv_chains") + " --input float32[2,3,33,33]");
  ASSERT_EQ(chains.exit_code, 0) << chains.output;
  EXPECT_NE(chains.output.find("reorder: %"), std::string::npos) << chains.output;
  auto json_out = run_command(explain + " --json");
  ASSERT_EQ(json_out.exit_code, 0) << json_out.output;
  auto j = nlohmann::json::parse(json_out.output);
  const auto& layout = j["graphs"][0]["layout"];
  ASSERT_TRUE(layout.is_object()) << j["graphs"][0].dump();
  EXPECT_EQ(layout["convolutions"], 52);
  EXPECT_TRUE(layout["reorders"].is_array());
  EXPECT_FALSE(layout["format"].get<std::string>().empty());
}

}  // namespace
}  // namespace tcprof
