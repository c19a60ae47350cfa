// The cuda backend without a GPU: every sample's graphs lowered by the shared middle, generated as
// CUDA, compiled by NVRTC for a device architecture, and run on the CPU through the emulation header
// against eager LibTorch; the launch arguments as the device reads them; `explain --backend cuda`.
#include <cctype>
#include <cstdlib>
#include <limits>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/cuda.h>
#include <fmt/format.h>

#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/backends/cuda/codegen_cuda.h"
#include "compiler/ir/ivalue_tensors.h"
#include "compiler/backends/cuda/cuda_emulation.h"
#include "compiler/backends/cuda/cuda_launch.h"
#include "compiler/backends/cuda/linear_epilogue.h"
#include "compiler/runtime/output_check.h"
#include "compiler/toolchain/kernel_library.h"
#include "compiler/toolchain/nvrtc_compiler.h"
#include "compiler/torch_compat.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::expect_compiled_matches_eager;
using testing::expect_same_output;
using testing::inputs_for;
using testing::run_command;
using testing::sample;
using testing::strict_cuda;
using testing::SampleCase;
using testing::Totals;
using testing::totals;


class CudaSamples : public ::testing::TestWithParam<SampleCase> {};

// The CUDA program each sample's graphs get, compiled by NVRTC (where the toolkit is) and run in
// emulation: the same outputs as eager over calls with fresh inputs.
TEST_P(CudaSamples, MatchesEagerInEmulation) {
  at::NoGradGuard no_grad;
  const SampleCase& c = GetParam();
  CompiledModule m(load_model(sample(c.model)), strict_cuda(), nullptr);
  CompiledModule reference(load_model(sample(c.model)), strict_cuda(), nullptr);
  for (int64_t call = 0; call < 2; ++call) {
    auto in = inputs_for(c.inputs, call);
    expect_same_output(m.call(in), reference.call_eager(in));
  }
  Totals r = totals(m);
  EXPECT_GT(r.kernels, 0) << r.ir;
  if (NvrtcCompiler::available()) {
    EXPECT_NE(r.ir.find("CUBIN for sm_90"), std::string::npos) << r.ir.substr(0, 400);
  }
  if (std::string(c.model) == "cnn") {  // the model has no add: each convolution's bias became one, fused after it
    EXPECT_NE(r.ir.find("aten::add"), std::string::npos) << r.ir;
  }
}

// On a GPU: the module, its inputs and the kernels on the device (CUBIN through the driver, CUDA
// graph replay from the second call), against eager LibTorch on the device over fresh inputs.
TEST_P(CudaSamples, MatchesEagerOnTheGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device (the emulation test covers the code)";
  at::NoGradGuard no_grad;
  const SampleCase& c = GetParam();
  CompileOptions options = strict_cuda();
  options.cuda_arch.clear();  // the device's own architecture
  LoadedModel model = load_model(sample(c.model));
  model.module.to(c10::Device(c10::kCUDA));
  CompiledModule m(model, options, nullptr);
  for (int64_t call = 0; call < 4; ++call) {
    std::vector<c10::IValue> in = inputs_for(c.inputs, call);
    for (auto& v : in) v = v.toTensor().to(c10::kCUDA);
    c10::IValue expected = m.call_eager(in), got = m.call(in);
    auto cpu = [](const at::Tensor& t) { return t.cpu(); };
    expect_same_output(map_tensors(got, cpu), map_tensors(expected, cpu));
  }
  Totals r = totals(m);
  EXPECT_GT(r.kernels, 0) << r.ir;
  EXPECT_NE(r.ir.find("CUBIN for sm_"), std::string::npos) << r.ir.substr(0, 400);
  if (std::string(c.model) == "cnn") {  // the convolutions' layout was measured, and the IR says which won
    EXPECT_NE(r.ir.find("convolutions"), std::string::npos) << r.ir.substr(0, 600);
  }
}

INSTANTIATE_TEST_SUITE_P(EverySample, CudaSamples,
                         ::testing::Values(SampleCase{"gpt_tiny", {"i64[2,16](0,512)"}}, SampleCase{"cnn", {"f32[2,3,32,32]"}},
                                           SampleCase{"submodule_break", {"f32[4,8]"}},
                                           SampleCase{"gate_base", {"f32[4,8]"}}),
                         [](const auto& info) { return std::string(info.param.model); });

// A CUDA graph replay writes into its own static copies of the inputs: a graph with an in-place op
// on an input (or a view of one) must keep running as compiled, or the caller's tensor never changes.
TEST(CudaBackend, AGraphThatWritesItsInputsIsNotReplayed) {
  testing::TempDir dir;
  struct Case {
    const char* source;
    std::vector<std::string> inputs;
    bool writes_outside;
  };
  const std::vector<Case> cases = {
      {"def forward(self, x, c):\n  c.add_(x)\n  return x * 2\n", {"f32[4,8]", "f32[4,8]"}, true},
      {"def forward(self, x):\n  y = x.view(-1)\n  y.mul_(2.0)\n  return y + 1\n", {"f32[4,8]"}, true},
      {"def forward(self, x):\n  y = x * 2\n  y.add_(1.0)\n  return y.relu() + y\n", {"f32[4,8]"}, false},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = testing::save_scripted(cases[i].source, dir.file(fmt::format("writes{}.pt", i)));
    LoadedModel model = load_model(path);
    const bool gpu = torch::cuda::is_available();
    if (gpu) model.module.to(c10::Device(c10::kCUDA));
    CompileOptions options = strict_cuda();
    if (gpu) options.cuda_arch.clear();
    CompiledModule m(model, options, nullptr);
    for (int64_t call = 0; call < 3; ++call) {
      std::vector<c10::IValue> in = inputs_for(cases[i].inputs, call), eager_in = inputs_for(cases[i].inputs, call);
      for (auto* values : {&in, &eager_in}) {
        for (auto& v : *values) v = v.toTensor().to(gpu ? c10::kCUDA : c10::kCPU);
      }
      c10::IValue got = m.call(in), expected = m.call_eager(eager_in);
      expect_same_output(got.toTensor().cpu(), expected.toTensor().cpu());
      for (size_t k = 0; k < in.size(); ++k) {
        EXPECT_TRUE(at::equal(in[k].toTensor().cpu(), eager_in[k].toTensor().cpu())) << cases[i].source << " input " << k;
      }
    }
    EXPECT_EQ(writes_outside_graph(m.frames()[0]->entries[0]->graph), cases[i].writes_outside) << cases[i].source;
  }
}

// Row kernels reduce with a warp butterfly and the warps' partials in shared memory: the result
// must not depend on the block size (one warp, two, four), nor on the launch sizes a GPU session
// sweeps (TCPROF_CUDA_LAUNCH: a pointwise block, a warp row block of one row or two). Each
// setting's compiled output is eager's, and bit for bit the first setting's.
TEST(CudaBackend, RowKernelsGiveTheSameResultForEveryBlockSize) {
  at::NoGradGuard no_grad;
  auto in = inputs_for({"i64[2,16](0,512)"}, 0);
  CompiledModule reference(load_model(sample("gpt_tiny")), strict_cuda(), nullptr);
  c10::IValue eager = reference.call_eager(in);
  at::Tensor first;
  const std::vector<std::pair<const char*, const char*>> settings = {
      {"TCPROF_CUDA_EMULATION_BLOCK", "32"}, {"TCPROF_CUDA_EMULATION_BLOCK", "64"}, {"TCPROF_CUDA_EMULATION_BLOCK", "128"},
      {"TCPROF_CUDA_LAUNCH", "warp-row-block=32"}, {"TCPROF_CUDA_LAUNCH", "pointwise-block=32,warp-row-block=64"}};
  for (const auto& [name, value] : settings) {
    setenv(name, value, 1);
    CompiledModule m(load_model(sample("gpt_tiny")), strict_cuda(), nullptr);
    SCOPED_TRACE(fmt::format("{}={}", name, value));
    m.call(in);  // compiles; returns the capture's (eager) result
    const c10::IValue out = m.call(in);
    expect_same_output(out, eager);
    ASSERT_TRUE(out.isTensor());
    if (!first.defined()) first = out.toTensor();
    EXPECT_TRUE(at::equal(out.toTensor(), first));
    unsetenv(name);
  }
}

// Rows up to kWarpRowMax are reduced by a warp each, several rows a block, and a block's last warps
// may have no row (5 rows, 2 a block in emulation); longer rows by the whole block. Both against eager.
TEST(CudaBackend, ShortRowsTakeAWarpAndLongRowsTheBlock) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  const std::string path = testing::save_scripted(
      "def forward(self, x, y):\n"
      "  return torch.softmax(x, -1), torch.layer_norm(x, [x.size(-1)]), torch.softmax(y, -1), torch.layer_norm(y, [y.size(-1)])\n",
      dir.file("rows.pt"));
  CompiledModule m(load_model(path), strict_cuda(), nullptr);
  for (int64_t call = 0; call < 2; ++call) {
    auto in = inputs_for({"f32[5,1024]", "f32[3,1500]"}, call);
    expect_same_output(m.call(in), m.call_eager(in));
  }
  Totals r = totals(m);
  EXPECT_GT(r.kernels, 0) << r.ir;
  const std::string code = m.frames()[0]->entries[0]->compiled->report().code;
  EXPECT_NE(code.find(fmt::format("tc_warp_rows = inner <= {}", kWarpRowMax)), std::string::npos) << code.substr(0, 2000);
}

// A warp's row of up to kRowCacheMax elements (kRowCacheSlots a lane) computes what several of its loops share once into
// registers, and the loops read those; longer rows compute it in each loop. Rows either side of
// the bound and rows that fill 1 to 16 of a lane's slots; a shared value that is an input, a sum
// (x + residual before a layer norm), a strided row (a transpose), bf16 and f64 rows; each
// compiled call against eager.
TEST(CudaBackend, ShortRowsAreReadOnceIntoRegisters) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  const std::string path = testing::save_scripted(
      "def forward(self, x, y, w, h, d):\n"
      "  t = x.transpose(0, 1)\n"
      "  return torch.layer_norm(x + y, [x.size(-1)], w, w), torch.log_softmax(t, -1), x.var(-1), torch.softmax(h, -1), torch.softmax(d, -1)\n",
      dir.file("cached_rows.pt"));
  CompiledModule m(load_model(path), strict_cuda(), nullptr);
  for (int64_t inner : {int64_t{7}, int64_t{300}, kRowCacheMax, kRowCacheMax + 1}) {
    SCOPED_TRACE(fmt::format("rows of {}", inner));
    expect_compiled_matches_eager(m, inputs_for({fmt::format("f32[5,{}]", inner), fmt::format("f32[5,{}]", inner),
                                                 fmt::format("f32[{}]", inner), fmt::format("bf16[3,{}]", inner),
                                                 fmt::format("f64[2,{}]", inner)}, inner));
  }
  Totals r = totals(m);
  EXPECT_GT(r.kernels, 0) << r.ir;
  EXPECT_NE(r.code.find(fmt::format("if (inner <= tc_step * {})", kRowCacheSlots)), std::string::npos) << r.code.substr(0, 3000);
  // The transposed row is read once, strided, into the lane's registers.
  EXPECT_NE(r.code.find("= r0[j * s0];\n        c0[tc_k] = t0;"), std::string::npos) << r.code.substr(0, 6000);
  // x + y, computed once: the sum is what the lane keeps (its node follows the two loads).
  EXPECT_NE(r.code.find("= (t1 + t0);\n        c2[tc_k] = t2;"), std::string::npos) << r.code.substr(0, 6000);
  EXPECT_NE(r.code.find("double c0[16];"), std::string::npos);  // the f64 row, 32 registers
}

// A row the whole block reduces keeps its shared values in registers too, up to kRowCacheSlots
// elements a thread (in emulation here, 128-thread blocks: rows up to 2,048), and a thread takes
// the same elements in the same order as the strided loop: the same bits as with the registers
// off (TCPROF_CUDA_OFF=row-registers), and eager's result, on either side of the bound.
TEST(CudaBackend, LongRowsAreReadOnceIntoRegistersWithTheSameSums) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  const std::string path = testing::save_scripted(
      "def forward(self, x, y):\n"
      "  return torch.log_softmax(x, -1), torch.layer_norm(x + y, [x.size(-1)]), torch.softmax(x, -1)\n",
      dir.file("long_rows.pt"));
  setenv("TCPROF_CUDA_EMULATION_BLOCK", "128", 1);
  for (int64_t inner : {int64_t{1025}, int64_t{2048}, int64_t{2049}}) {
    SCOPED_TRACE(fmt::format("rows of {}", inner));
    const auto in = inputs_for({fmt::format("f32[3,{}]", inner), fmt::format("f32[3,{}]", inner)}, inner);
    std::vector<c10::IValue> outs;
    for (const char* off : {"", "row-registers"}) {
      setenv("TCPROF_CUDA_OFF", off, 1);
      CompiledModule m(load_model(path), strict_cuda(), nullptr);
      expect_compiled_matches_eager(m, in);
      outs.push_back(m.call(in));
      Totals r = totals(m);
      EXPECT_EQ(r.code.find(fmt::format("if (inner <= tc_step * {})", kRowCacheSlots)) != std::string::npos, *off == '\0');
    }
    for (size_t o = 0; o < 3; ++o) {
      EXPECT_TRUE(at::equal(outs[0].toTupleRef().elements()[o].toTensor(), outs[1].toTupleRef().elements()[o].toTensor())) << o;
    }
  }
  unsetenv("TCPROF_CUDA_OFF");
  unsetenv("TCPROF_CUDA_EMULATION_BLOCK");
}

// GELU's gradient (what a training graph's backward runs for each GELU) is a generated kernel on
// both backends, exact and tanh forms, into both tails and past where exp underflows, against
// LibTorch's gelu_backward.
TEST(CudaBackend, GeluGradientsAreGeneratedOnBothBackends) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  const std::string path = testing::save_scripted(
      "def forward(self, g, x):\n  return torch.gelu_backward(g, x), torch.gelu_backward(g, x, approximate='tanh')\n",
      dir.file("gelu_grads.pt"));
  for (const CompileOptions& o : {strict_cuda(), testing::strict_cpp()}) {
    SCOPED_TRACE(o.backend);
    CompiledModule m(load_model(path), o, nullptr);
    for (int64_t call = 0; call < 2; ++call) {
      at::manual_seed(call);
      std::vector<c10::IValue> in{at::randn({4, 1024}), at::linspace(-16, 16, 4096).reshape({4, 1024}) + at::rand({4, 1024}) * 0.01};
      expect_same_output(m.call(in), m.call_eager(in));
    }
    Totals r = totals(m);
    EXPECT_EQ(r.fallbacks, 0) << r.ir;
    EXPECT_GT(r.kernels, 0) << r.ir;
  }
}

// A sum over the leading dims (a bias's gradient) is a column kernel: the ops computing its operand
// fused into it and written out on the way, keepdim, a sum over dim 0 alone, a transposed operand,
// bf16. Few rows sum in one block per 32 columns; many rows are split across blocks and their
// partial sums added by the finish kernel (emulation splits from 4 rows a split). Each call against
// eager and bit for bit the same on a second run; no sum left to LibTorch.
TEST(CudaBackend, ColumnSumsAreKernelsThatSplitTheirRowsAcrossBlocks) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  const std::string path = testing::save_scripted(
      "def forward(self, x, y, t, h):\n"
      "  g = torch.tanh(x) * y\n"
      "  return g.sum([0, 1]), (g * x).sum([0, 1], keepdim=True), g, torch.exp(x).sum(0), (t * 2.0).sum(0), (h * h).sum(0)\n",
      dir.file("columns.pt"));
  CompiledModule m(load_model(path), strict_cuda(), nullptr);
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 5}, {3, 40}, {40, 100}, {7, 33}}) {
    SCOPED_TRACE(fmt::format("[{}, 2, {}]", rows, cols));
    const auto in = inputs_for({fmt::format("f32[{},2,{}]", rows, cols), fmt::format("f32[{}]", cols), fmt::format("f32[{},{}]", cols, rows * 2),
                                fmt::format("bf16[{},{}]", rows * 2, cols)}, rows);
    std::vector<c10::IValue> transposed = in;
    transposed[2] = in[2].toTensor().t();  // [rows * 2, cols], columns strided
    for (int compile = 0; compile < 3; ++compile) m.call(transposed);
    const c10::IValue first = m.call(transposed), again = m.call(transposed), eager = m.call_eager(transposed);
    for (size_t o = 0; o < 6; ++o) {
      const at::Tensor& a = first.toTupleRef().elements()[o].toTensor();
      const at::Tensor& b = eager.toTupleRef().elements()[o].toTensor();
      if (o < 5) expect_same_output(a, b);
      // bf16: eager rounds h * h to bf16 before summing, the kernel sums the float products.
      else EXPECT_TRUE(at::allclose(a.to(at::kFloat), b.to(at::kFloat), 1.6e-2, 1e-2)) << (a.to(at::kFloat) - b.to(at::kFloat)).abs().max();
      EXPECT_TRUE(at::equal(a, again.toTupleRef().elements()[o].toTensor())) << o;
    }
  }
  Totals r = totals(m);
  EXPECT_EQ(r.fallbacks, 0) << r.ir;
  EXPECT_NE(r.ir.find("column"), std::string::npos) << r.ir;
  EXPECT_EQ(r.ir.find("extern aten::sum"), std::string::npos) << r.ir;
  EXPECT_NE(r.code.find("_finish(const tc_params<"), std::string::npos) << r.code.substr(0, 3000);
  EXPECT_NE(r.code.find("double a0 = 0.0;"), std::string::npos) << "column sums accumulate in double";
}

// One accumulation rule for every backend (kernel_levels.h): the layer norm's f32 sums in double,
// softmax's denominator in float.
TEST(CudaBackend, RowSumsFollowTheAccumulationRule) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("gpt_tiny")), strict_cuda(), nullptr);
  m.call(inputs_for({"i64[2,16](0,512)"}, 0));
  Totals r = totals(m);
  EXPECT_NE(r.code.find("double t"), std::string::npos) << "a layer norm's sum accumulates in double";
  EXPECT_NE(r.code.find("float t"), std::string::npos);
  EXPECT_NE(r.code.find("tc_block_reduce"), std::string::npos);
}

// The GPT's attention (matmul, scale, causal mask, softmax, matmul) becomes one
// scaled_dot_product_attention call with is_causal: flash attention on a GPU. The outputs match
// eager in MatchesEagerInEmulation/gpt_tiny.
TEST(CudaBackend, CausalAttentionBecomesOneScaledDotProductAttentionCall) {
#if TCPROF_HAVE_SDPA
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("gpt_tiny")), strict_cuda(), nullptr);
  m.call(inputs_for({"i64[2,16](0,512)"}, 0));
  int sdpa = 0;
  for (const auto& f : m.frames()) {
    for (const auto& e : f->entries) {
      for (const auto& g : e->compiled->report().kernel_groups) {
        if (g.find("_sdpa_causal: aten::matmul") != std::string::npos) ++sdpa;
      }
    }
  }
  EXPECT_EQ(sdpa, 2) << "one per block of the GPT";
#else
  GTEST_SKIP() << "this LibTorch has no scaled_dot_product_attention with a scale (2.1+)";
#endif
}

// The op the epilogue pass writes is the linear and then its activation, on any rows: 3-D, 2-D,
// strided, bf16, none (no input features: the bias alone), on the CPU and on a GPU
// (_addmm_activation there). An activation it does not know is refused.
TEST(CudaBackend, LinearActivationIsTheLinearThenItsActivation) {
  at::NoGradGuard no_grad;
  std::vector<c10::Device> devices{c10::kCPU};
  if (torch::cuda::is_available()) devices.emplace_back(c10::kCUDA);
  for (const c10::Device& device : devices) {
    for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
      at::manual_seed(7);
      const auto o = at::TensorOptions().device(device).dtype(dtype);
      const at::Tensor w = at::randn({24, 16}, o), b = at::randn({24}, o), w0 = at::randn({24, 0}, o);
      for (const at::Tensor& x : {at::randn({3, 5, 16}, o), at::randn({7, 16}, o), at::randn({16, 9}, o).t(), at::randn({4, 0}, o)}) {
        SCOPED_TRACE(c10::str(device, " ", dtype, " ", x.sizes()));
        const at::Tensor& weight = x.size(-1) == 0 ? w0 : w;
        const at::Tensor y = at::linear(x, weight, b);
        const double tol = dtype == at::kFloat ? 1e-5 : 2e-2;
        EXPECT_TRUE(at::allclose(linear_activation(x, weight, b, "relu").to(at::kFloat), at::relu(y).to(at::kFloat), tol, tol));
        EXPECT_TRUE(at::allclose(linear_activation(x, weight, b, "gelu_tanh").to(at::kFloat), at::gelu(y, "tanh").to(at::kFloat), tol, tol));
        EXPECT_EQ(linear_activation(x, weight, b, "relu").sizes(), y.sizes());
      }
    }
  }
  EXPECT_THROW(linear_activation(at::randn({2, 3}), at::randn({4, 3}), at::randn({4}), "gelu"), c10::Error);
}

// A linear's ReLU or tanh-GELU joins the GEMM as cuBLASLt's epilogue (_addmm_activation on a
// GPU): one op instead of the linear and a pass of its own. The exact GELU, a linear without a
// bias, one whose output is read twice and one the graph returns stay as they were. Rows of a 3-D
// and a 2-D input.
TEST(CudaBackend, LinearActivationsJoinTheGemmEpilogue) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  const std::string path = testing::save_scripted(
      "def forward(self, x, w1, b1, w2, b2, w3):\n"
      "  h = torch.relu(torch.linear(x, w1, b1))\n"
      "  g = torch.gelu(torch.linear(h, w2, b2), approximate='tanh')\n"
      "  e = torch.gelu(torch.linear(g, w3, b2))\n"
      "  y = torch.linear(e, w3, b2)\n"
      "  k = torch.linear(x * 2.0, w1, b1)\n"
      "  return torch.relu(y) + y, torch.relu(torch.linear(e, w3)), torch.relu(k), k\n",
      dir.file("linear_epilogues.pt"));
  auto specs = [](const std::string& rows) {
    return std::vector<std::string>{"f32[" + rows + ",32]", "f32[48,32]", "f32[48]", "f32[40,48]", "f32[40]", "f32[40,40]"};
  };
  CompiledModule m(load_model(path), strict_cuda(), nullptr);
  for (const std::string rows : {"4,6", "5"}) {
    SCOPED_TRACE(rows);
    expect_compiled_matches_eager(m, inputs_for(specs(rows)));
  }
  Totals r = totals(m);
  auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(r.ir, "tcprof::linear_activation("), 4) << r.ir;  // two in each graph
  EXPECT_EQ(count(r.ir, "aten::linear("), 8) << r.ir;               // exact GELU, read twice, no bias, returned
  int groups = 0;
  for (const auto& f : m.frames()) {
    for (const auto& e : f->entries) {
      for (const auto& k : e->compiled->report().kernel_groups) groups += k.rfind("linear_", 0) == 0;
    }
  }
  EXPECT_EQ(groups, 4);
  if (!torch::cuda::is_available()) return;
  // On a GPU the epilogue is cuBLASLt's: its tanh-GELU within f32's compiled tolerance of eager's,
  // and a NaN row stays NaN through its ReLU as through eager's.
  LoadedModel model = load_model(path);
  CompileOptions options = strict_cuda();
  options.cuda_arch.clear();
  CompiledModule gpu(model, options, nullptr);
  std::vector<c10::IValue> in = inputs_for(specs("64,16"));
  in[0].toTensor()[3][5].fill_(std::numeric_limits<float>::quiet_NaN());
  for (auto& v : in) v = v.toTensor().to(c10::kCUDA);
  auto cpu = [](const at::Tensor& t) { return t.cpu(); };
  for (int call = 0; call < 3; ++call) expect_same_output(map_tensors(gpu.call(in), cpu), map_tensors(gpu.call_eager(in), cpu));
  EXPECT_EQ(count(totals(gpu).ir, "tcprof::linear_activation("), 2) << totals(gpu).ir;
}

// TCPROF_CUDA_OFF turns the pointwise vectors, the row registers and the linear epilogues off one
// by one (what gpu-check's A/B runs on a GPU): each is gone from the program and the outputs still
// match eager. An unknown name is a usage error that names the known ones.
TEST(CudaBackend, EachFeatureTurnsOffAloneForAnAB) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  const std::string path = testing::save_scripted(
      "def forward(self, x, w, b):\n"
      "  return torch.sigmoid(w) * 2.0, torch.layer_norm(x + 1.0, [x.size(-1)]), torch.relu(torch.linear(x, w, b))\n",
      dir.file("features.pt"));
  struct Unset {  // the switch is the process's: gone after the test, whatever it does
    ~Unset() { unsetenv("TCPROF_CUDA_OFF"); }
  } unset;
  struct Case {
    const char* off;
    bool vectors, registers, epilogue;
  };
  for (const Case& c : {Case{"", true, true, true}, Case{"vectors", false, true, true}, Case{"row-registers", true, false, true},
                        Case{"linear-epilogues", true, true, false}, Case{"vectors,row-registers,linear-epilogues", false, false, false}}) {
    SCOPED_TRACE(c.off);
    setenv("TCPROF_CUDA_OFF", c.off, 1);
    CompiledModule m(load_model(path), strict_cuda(), nullptr);
    expect_compiled_matches_eager(m, inputs_for({"f32[6,64]", "f32[24,64]", "f32[24]"}));
    Totals r = totals(m);
    EXPECT_EQ(r.code.find("tc_load4(in0, v)") != std::string::npos, c.vectors) << r.code.substr(0, 4000);
    EXPECT_EQ(r.code.find(fmt::format("if (inner <= tc_step * {})", kRowCacheSlots)) != std::string::npos, c.registers);
    EXPECT_EQ(r.ir.find("tcprof::linear_activation(") != std::string::npos, c.epilogue) << r.ir;
  }
  setenv("TCPROF_CUDA_OFF", "vectors,tiles", 1);
  CompiledModule m(load_model(path), strict_cuda(), nullptr);
  try {
    m.call(inputs_for({"f32[6,64]", "f32[24,64]", "f32[24]"}));
    ADD_FAILURE() << "an unknown feature compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("unknown feature 'tiles' (known: vectors, row-registers"), std::string::npos) << e.what();
  }
}

// A model saved in bf16 compiles: its pointwise and row ops become kernels that load bf16,
// compute in float and store bf16 rounded to nearest even; outputs within bf16's tolerance.
TEST(CudaBackend, Bf16GraphsCompileIntoKernelsAndMatchEager) {
  at::NoGradGuard no_grad;
  auto bf16_model = [] {
    LoadedModel m = load_model(sample("gpt_tiny"));
    m.module.to(at::kBFloat16);
    return m;
  };
  LoadedModel reference_model = bf16_model();
  CompiledModule m(bf16_model(), strict_cuda(), nullptr);
  CompiledModule reference(reference_model, strict_cuda(), nullptr);
  for (int64_t call = 0; call < 2; ++call) {
    auto in = inputs_for({"i64[2,16](0,512)"}, call);
    c10::IValue out = m.call(in), eager = reference.call_eager(in);
    ASSERT_EQ(out.toTensor().scalar_type(), at::kBFloat16);
    // The verdict `run --verify` gives: eager rounds every op's result to bf16 and the kernels
    // keep float between ops, so through a whole GPT they differ by a few bf16 ulps, and the f64
    // oracle says which is nearer the exact result.
    torch::jit::Module f64 = f64_copy(reference_model.module);
    std::string why_not;
    std::optional<c10::IValue> oracle = run_f64(f64, "forward", in, &why_not);
    ASSERT_TRUE(oracle.has_value()) << why_not;
    Comparison c = compare_values(out, eager, &*oracle, Tolerance{});
    EXPECT_TRUE(c.ok) << c.problem;
  }
  Totals r = totals(m);
  EXPECT_GT(r.kernels, 0) << r.ir;
  EXPECT_NE(r.code.find("tc_bf16_to_float(r"), std::string::npos);
  EXPECT_NE(r.code.find("tc_float_to_bf16(t"), std::string::npos);
}

// A pointwise kernel reads and writes 4-element vectors where every operand is laid out as the
// index space and aligned for it, and elements one by one otherwise: both paths, the tail of a
// size that is not a multiple of 4, one operand off alignment among aligned ones, f32, bf16 and
// bool operands, each compiled call against eager.
TEST(CudaBackend, PointwiseKernelsTakeVectorsWhereOperandsAreAligned) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  const std::string path = testing::save_scripted(
      "def forward(self, x, y, m, h):\n"
      "  return torch.where(m, x * y + 1.0, torch.sigmoid(x)), (h * 2.0 + 1.0).relu(), x.gt(y)\n",
      dir.file("vectors.pt"));
  CompiledModule m(load_model(path), strict_cuda(), nullptr);
  // An offset operand starts 1 element into its storage: contiguous, but 4 bytes (f32), 2 (bf16)
  // or 1 (bool) past a vector boundary.
  auto operand = [](int64_t n, bool offset, const at::Tensor& storage) {
    return storage.narrow(0, offset ? 1 : 0, n * 7).view({n, 7});
  };
  struct Case {
    int64_t rows;
    bool offset_x, offset_rest;
  };
  // 28 elements (7 vectors), 35 (8 and a tail of 3), 63; 2,100 (several blocks in emulation).
  for (const Case& c : {Case{4, false, false}, Case{5, false, false}, Case{9, false, false}, Case{300, false, false},
                        Case{5, true, true}, Case{9, true, false}}) {
    SCOPED_TRACE(fmt::format("{} rows, x offset {}, others offset {}", c.rows, c.offset_x, c.offset_rest));
    at::manual_seed(c.rows);
    const int64_t n = c.rows * 7 + 1;
    std::vector<c10::IValue> in{operand(c.rows, c.offset_x, at::randn({n})), operand(c.rows, c.offset_rest, at::randn({n})),
                                operand(c.rows, c.offset_rest, at::rand({n}).gt(0.5)),
                                operand(c.rows, c.offset_rest, at::randn({n}).to(at::kBFloat16))};
    expect_compiled_matches_eager(m, in);
  }
  Totals r = totals(m);
  EXPECT_GT(r.kernels, 0) << r.ir;
  EXPECT_NE(r.code.find("tc_load4(in0, v)"), std::string::npos) << r.code.substr(0, 3000);
  EXPECT_NE(r.code.find("tc_store4(out0, v, y0)"), std::string::npos);
  EXPECT_NE(r.code.find("tc_vec4<uint16_t>"), std::string::npos);  // the bf16 operand's 8-byte vectors
}

// The emulation's f16 and bf16 conversions round as LibTorch's c10::Half and c10::BFloat16 do:
// every 16-bit pattern back and forth, and floats around every rounding boundary.
TEST(CudaEmulation, SixteenBitConversionsRoundAsLibTorch) {
  std::string source = std::string(cuda_emulation_header()) + cuda_prelude() +
                       "extern \"C\" float f16_to_f32(uint16_t h) { return tc_f16_to_float(h); }\n"
                       "extern \"C\" uint16_t f32_to_f16(float f) { return tc_float_to_f16(f); }\n"
                       "extern \"C\" float bf16_to_f32(uint16_t h) { return tc_bf16_to_float(h); }\n"
                       "extern \"C\" uint16_t f32_to_bf16(float f) { return tc_float_to_bf16(f); }\n";
  KernelLibraryOptions options;
  options.openmp = false;
  testing::TempDir cache;
  options.cache_dir = cache.path().string();
  KernelLibraryResult lib = KernelLibraryBuilder(options).compile(source);
  auto f16_to_f32 = reinterpret_cast<float (*)(uint16_t)>(lib.library->symbol("f16_to_f32"));
  auto f32_to_f16 = reinterpret_cast<uint16_t (*)(float)>(lib.library->symbol("f32_to_f16"));
  auto bf16_to_f32 = reinterpret_cast<float (*)(uint16_t)>(lib.library->symbol("bf16_to_f32"));
  auto f32_to_bf16 = reinterpret_cast<uint16_t (*)(float)>(lib.library->symbol("f32_to_bf16"));
  int wrong = 0;
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float half = static_cast<float>(c10::Half(h, c10::Half::from_bits()));
    const float brain = static_cast<float>(c10::BFloat16(h, c10::BFloat16::from_bits()));
    if (std::isnan(half) ? !std::isnan(f16_to_f32(h)) : f16_to_f32(h) != half) ++wrong;
    if (std::isnan(brain) ? !std::isnan(bf16_to_f32(h)) : bf16_to_f32(h) != brain) ++wrong;
    if (std::isnan(half)) continue;
    // The float halfway to the next value up: ties go to the even one, as c10 rounds them.
    for (float f : {half, std::nextafter(half, INFINITY), (half + f16_to_f32(static_cast<uint16_t>(h + 1))) / 2}) {
      if (std::isfinite(f) && f32_to_f16(f) != c10::Half(f).x) ++wrong;
    }
    if (!std::isnan(brain)) {
      for (float f : {brain, std::nextafter(brain, INFINITY), std::nextafter(brain, -INFINITY)}) {
        if (std::isfinite(f) && f32_to_bf16(f) != c10::BFloat16(f).x) ++wrong;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
}

// The argument block is tc_params<NI, NO, R> as the device reads it: pointers, sizes, then each
// input's strides, 8 bytes each; too large for a kernel argument, nothing (the ops run through
// LibTorch).
TEST(CudaLaunch, ParamsArePackedAsTheKernelReadsThem) {
  CudaKernelSymbol k;
  k.inputs = 2;
  k.outputs = 1;
  k.rank = 2;
  float a = 0, b = 0, c = 0;
  const void* in[] = {&a, &b};
  void* out[] = {&c};
  const int64_t sizes[] = {3, 5};
  const int64_t strides[] = {5, 1, 0, 1};
  std::vector<uint64_t> p = pack_params(k, in, out, sizes, strides);
  ASSERT_EQ(p.size(), 2u + 1u + 2u + 4u);
  EXPECT_EQ(p[0], reinterpret_cast<uint64_t>(&a));
  EXPECT_EQ(p[1], reinterpret_cast<uint64_t>(&b));
  EXPECT_EQ(p[2], reinterpret_cast<uint64_t>(&c));
  EXPECT_EQ(p[3], 3u);
  EXPECT_EQ(p[4], 5u);
  EXPECT_EQ(p[5], 5u);
  EXPECT_EQ(p[8], 1u);
  k.inputs = 60;
  k.rank = 8;
  std::vector<const void*> many(60, &a);
  std::vector<int64_t> many_strides(60 * 8, 1), many_sizes(8, 2);
  EXPECT_TRUE(pack_params(k, many.data(), out, many_sizes.data(), many_strides.data()).empty());
}

TEST(CudaLaunch, RowBlocksGrowWithTheRowAndGridsAreCapped) {
  CudaKernelSymbol row;
  row.row = true;
  row.rank = 2;
  const int64_t small[] = {100000, 20}, wide[] = {4, 5000}, few[] = {3, 512};
  LaunchShape s = launch_shape(row, small, LaunchLimits{});
  EXPECT_EQ(s.block, 256u) << "short rows: a warp each, 8 a block";
  EXPECT_EQ(s.grid, 12500u);
  s = launch_shape(row, few, LaunchLimits{});
  EXPECT_EQ(s.block, 256u);
  EXPECT_EQ(s.grid, 1u);
  s = launch_shape(row, wide, LaunchLimits{});
  EXPECT_EQ(s.block, 1024u);
  EXPECT_EQ(s.grid, 4u);
  CudaKernelSymbol pointwise;
  pointwise.rank = 1;
  const int64_t n[] = {1000}, big[] = {4 << 20};
  s = launch_shape(pointwise, n, LaunchLimits{});
  EXPECT_EQ(s.block, 256u);
  EXPECT_EQ(s.grid, 1u) << "4 elements a thread";
  s = launch_shape(pointwise, big, LaunchLimits{});
  EXPECT_EQ(s.grid, 4096u);
  // The sizes a GPU session sweeps (TCPROF_CUDA_LAUNCH).
  setenv("TCPROF_CUDA_LAUNCH", "pointwise-block=512,warp-row-block=128", 1);
  const LaunchLimits swept = launch_limits_from_env(LaunchLimits{});
  EXPECT_EQ(launch_shape(pointwise, big, swept).block, 512u);
  EXPECT_EQ(launch_shape(pointwise, big, swept).grid, 2048u);
  EXPECT_EQ(launch_shape(row, small, swept).block, 128u) << "4 rows a block";
  EXPECT_EQ(launch_shape(row, small, swept).grid, 25000u);
  EXPECT_EQ(launch_shape(row, wide, swept).block, 1024u) << "a block's row is not swept";
  for (const char* bad : {"warp-row-block=48", "pointwise-block=2048", "tile=64", "pointwise-block", "warp-row-block=64x"}) {
    setenv("TCPROF_CUDA_LAUNCH", bad, 1);
    try {
      launch_limits_from_env(LaunchLimits{});
      ADD_FAILURE() << bad << " was taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
      EXPECT_NE(std::string(e.what()).find("multiple of 32 from 32 to 1024"), std::string::npos) << e.what();
    }
  }
  unsetenv("TCPROF_CUDA_LAUNCH");
}

// A column kernel: 32 columns a block, up to 8 warps of rows, the rows split across blocks until a
// thread sums about 16 of them, within 1,024 blocks in all; the kernel reads the splits back from
// its grid.
TEST(CudaLaunch, ColumnKernelsSplitTheirRowsWithinTheGrid) {
  CudaKernelSymbol column;
  column.column = true;
  column.rank = 2;
  struct Expect {
    int64_t rows, cols;
    unsigned block, grid;
    int64_t splits;
  };
  for (const Expect& e : {Expect{2048, 512, 256, 256, 16}, Expect{4, 100, 128, 4, 1}, Expect{100000, 64, 256, 1024, 512},
                          Expect{1, 100000, 32, 3125, 1}, Expect{300, 0, 256, 3, 3}}) {
    SCOPED_TRACE(fmt::format("[{}, {}]", e.rows, e.cols));
    const int64_t sizes[] = {e.rows, e.cols};
    const LaunchShape s = launch_shape(column, sizes, LaunchLimits{});
    EXPECT_EQ(s.block, e.block);
    EXPECT_EQ(s.grid, e.grid);
    EXPECT_EQ(column_splits(column, sizes, s), e.cols == 0 ? 1 : e.splits);
  }
  LaunchLimits few;
  few.max_grid = 8;
  const int64_t wide[] = {1000, 100000}, tall[] = {1000, 64};
  EXPECT_EQ(launch_shape(column, wide, few).grid, 8u) << "tiles beyond the grid: grid-stride, not split";
  EXPECT_EQ(column_splits(column, wide, launch_shape(column, wide, few)), 1);
  EXPECT_EQ(launch_shape(column, tall, few).grid, 8u);
  EXPECT_EQ(column_splits(column, tall, launch_shape(column, tall, few)), 4);
}

TEST(CudaBackend, NvrtcRejectsABadArchitectureWithAUsageError) {
  if (!NvrtcCompiler::available()) GTEST_SKIP() << "no NVRTC here";
  try {
    NvrtcCompiler::shared().compile("extern \"C\" __global__ void k() {}", "compute-90");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("sm_90"), std::string::npos);
  }
  EXPECT_TRUE(valid_cuda_arch("sm_90"));
  EXPECT_TRUE(valid_cuda_arch("sm_90a"));
  EXPECT_FALSE(valid_cuda_arch("sm90"));
}

// On a GPU the graph is replayed as one CUDA graph from its third call; CUPTI's records of the
// replayed kernels still belong to their call and graph (the replay is the graph's launch). The
// H200's first replayed runs recorded them under the call alone.
TEST(CudaBackendCli, ReplayedKernelsBelongToTheirCallAndGraph) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  testing::TempDir dir;
  const std::string db = dir.file("replay.db");
  auto r = run_command(fmt::format("{} run {} --input 'i64[2,16](0,512)' --device cuda --backend cuda --iters 6 --profile full --db {}",
                                   TCPROF_BIN, sample("gpt_tiny"), db));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(testing::query_db(db, "select count(*) from kernels where name like '%cuda graph replay'"), "0")
      << "the replays are launches of the graph";
  EXPECT_NE(testing::query_db(db, "select count(*) from kernels where kind = 'gpu' and call_id != 0"), "0");
  EXPECT_EQ(testing::query_db(db, "select count(*) from kernels where kind = 'gpu' and call_id != 0 and graph_id = 0"), "0");
}

// Without a GPU a user reads the CUDA program each graph would get, compiled for the named device.
// The CLI compiles with gradients on, where the tests above hold a NoGradGuard: a convolution's
// bias that is a parameter (it requires grad: SqueezeNet's) becomes the add after it, and a graph
// with an undefined tensor in it (the weights native multi-head attention does not return) gets its
// passes. Both stopped the compile with an internal error before; both now verify against eager.
TEST(CudaBackendCli, ParameterBiasesAndUndefinedTensorsCompileWithGradientsOn) {
  for (const auto& [model, input] : std::vector<std::pair<std::string, std::string>>{
           {"squeezenet1_1", "f32[1,3,32,32]"}, {"multi_head_attention", "f32[2,19,48]"}}) {
    auto r = run_command(fmt::format("{} run {} --input '{}' --backend cuda --arch sm_90 --verify -n 3 --db none", TCPROF_BIN,
                                     sample(model), input),
                         /*merge_stderr=*/true);
    EXPECT_EQ(r.exit_code, 0) << model << ": " << r.output;
    EXPECT_NE(r.output.find("outputs verified on 2 calls"), std::string::npos) << model << ": " << r.output;
  }
}

TEST(CudaBackendCli, ExplainPrintsTheCudaProgramCompiledForTheArchitecture) {
  auto r = run_command(fmt::format("{} explain {} --input 'i64[2,16](0,512)' --backend cuda --arch sm_80 --db none", TCPROF_BIN,
                                   sample("gpt_tiny")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Generated CUDA code of graph"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("__global__"), std::string::npos);
  if (NvrtcCompiler::available()) {
    EXPECT_NE(r.output.find("CUBIN for sm_80"), std::string::npos) << r.output;
  }
  // A second process takes the CUBIN from the cache instead of running NVRTC.
  if (NvrtcCompiler::available()) {
    testing::TempDir cache;
    const std::string cmd = fmt::format("TCPROF_CACHE_DIR={} {} explain {} --input 'i64[2,16](0,512)' --backend cuda --db none",
                                        cache.path().string(), TCPROF_BIN, sample("gpt_tiny"));
    auto cold = run_command(cmd), warm = run_command(cmd);
    EXPECT_NE(cold.output.find("compiled in"), std::string::npos) << cold.output;
    EXPECT_NE(warm.output.find("from the cache"), std::string::npos) << warm.output;
  }
  // Replay as a CUDA graph is for graphs on a GPU; the run says so.
  EXPECT_NE(r.output.find("CUDA graphs: on a GPU only"), std::string::npos) << r.output;
  // The header's other lines too: how each kernel's launch size is chosen.
  EXPECT_NE(r.output.find("launch sizes: the defaults in emulation; on a GPU, tuned"), std::string::npos) << r.output;
  // A training graph's two parts each have theirs, and say they are not replayed.
  auto grad = run_command(fmt::format("{} explain {} --input 'i64[2,16](0,512)' --backend cuda --grad --db none", TCPROF_BIN,
                                      sample("gpt_tiny")));
  ASSERT_EQ(grad.exit_code, 0) << grad.output;
  for (const char* part : {"        forward: ", "        backward: "}) {
    const size_t at = grad.output.find(part);
    ASSERT_NE(at, std::string::npos) << part << "\n" << grad.output.substr(0, 3000);
    const std::string header = grad.output.substr(at, grad.output.find("\n\n", at) - at);
    EXPECT_NE(header.find("kernel calls"), std::string::npos) << header;
  }
  std::string flat;  // wrapped lines joined: where a line breaks depends on the sizes and times printed
  for (char c : grad.output) {
    if (!std::isspace(static_cast<unsigned char>(c))) flat += c;
    else if (!flat.empty() && flat.back() != ' ') flat += ' ';
  }
  EXPECT_EQ(testing::occurrences(flat, "CUDA graphs: not used for training graphs"), 2u) << grad.output.substr(0, 3000);
  auto fixed = run_command(fmt::format("TCPROF_CUDA_OFF=launch-tuning {} explain {} --input 'i64[2,16](0,512)' --backend cuda --db none",
                                       TCPROF_BIN, sample("gpt_tiny")));
  EXPECT_NE(fixed.output.find("launch sizes: the defaults (TCPROF_CUDA_OFF=launch-tuning)"), std::string::npos) << fixed.output;
  auto bad_graphs = run_command(fmt::format("{} explain {} --input 'i64[2,16](0,512)' --backend cuda --cuda-graphs maybe --db none",
                                            TCPROF_BIN, sample("gpt_tiny")),
                                /*merge_stderr=*/true);
  EXPECT_EQ(bad_graphs.exit_code, 2) << bad_graphs.output;
  auto bad = run_command(fmt::format("{} explain {} --input 'i64[2,16](0,512)' --backend cuda --arch 90 --db none", TCPROF_BIN,
                                     sample("gpt_tiny")),
                         /*merge_stderr=*/true);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("sm_XY"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace tcprof
