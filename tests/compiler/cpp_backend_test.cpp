// The cpp backend against eager LibTorch on every sample model (inference, as `tcprof run` runs
// it), and what it records: kernels, fusion groups, regional sharing, phases, generated code,
// perf hints, the compile cache, compile failures and training graphs.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/backends/cpp/run/onednn_convolution.h"
#include "core/log.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::expect_compiled_matches_eager;
using testing::expect_same_output;
using testing::inputs_for;
using testing::run_command;
using testing::sample;
using testing::strict_cpp;
using testing::TempDir;
using testing::SampleCase;
using testing::Totals;
using testing::totals;


class CppSamples : public ::testing::TestWithParam<SampleCase> {};

// Every sample, several calls with fresh random inputs: compiled output == eager output.
TEST_P(CppSamples, MatchesEager) {
  at::NoGradGuard no_grad;
  const SampleCase& c = GetParam();
  CompiledModule m(load_model(sample(c.model)), strict_cpp(), nullptr);
  CompiledModule reference(load_model(sample(c.model)), strict_cpp(), nullptr);
  for (int64_t call = 0; call < 3; ++call) {
    auto in = inputs_for(c.inputs, call);
    if (std::string(c.model) == "module_state_mutation" && call > 0) break;  // it recompiles on purpose
    expect_same_output(m.call(in), reference.call_eager(in));
  }
  totals(m);
}

INSTANTIATE_TEST_SUITE_P(
    EverySample, CppSamples,
    ::testing::Values(SampleCase{"gpt_tiny", {"i64[2,16](0,512)"}}, SampleCase{"cnn", {"f32[2,3,32,32]"}},
                      SampleCase{"print_in_forward", {"f32[4,8]"}}, SampleCase{"warn_in_forward", {"f32[4,8]"}},
                      SampleCase{"data_dependent_branch", {"f32[4,8]"}}, SampleCase{"scalar_output", {"f32[4,8]"}},
                      SampleCase{"dynamic_output_shape", {"f32[4,8]"}},
                      SampleCase{"module_state_mutation", {"f32[4,8]"}},
                      SampleCase{"submodule_break", {"f32[4,8]"}}, SampleCase{"shape_guarded_branch", {"f32[4,3]"}},
                      SampleCase{"no_shape_rule", {"f32[2,3]"}}, SampleCase{"dict_in_forward", {"f32[5]"}},
                      SampleCase{"gate_base", {"f32[4,8]"}}, SampleCase{"gate_print", {"f32[4,8]"}}),
    [](const auto& info) { return std::string(info.param.model); });

TEST(CppBackend, GptFusesAttentionAndLayerNormAndSharesRepeatedBlocks) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("gpt_tiny")), strict_cpp(), nullptr);
  auto in = inputs_for({"i64[2,16](0,512)"});
  expect_compiled_matches_eager(m, in);
  Totals t = totals(m);
  EXPECT_GT(t.kernels, 4);
  EXPECT_GT(t.fused, t.kernels);                        // kernels hold several ops
  EXPECT_LT(t.unique, t.kernels);                       // identical blocks share kernels
  EXPECT_NE(t.ir.find("_attention\n"), std::string::npos) << t.ir;  // a step: matmul .. softmax .. matmul
  EXPECT_NE(t.ir.find("aten::add, aten::layer_norm"), std::string::npos) << t.ir;
  // Layer norm's sums accumulate in double; the attention kernel's softmax sums in float.
  EXPECT_NE(t.code.find("double t"), std::string::npos);
  size_t attention = t.code.find("// attention: ");
  ASSERT_NE(attention, std::string::npos) << t.code;
  std::string attention_kernel = t.code.substr(attention, t.code.find("\n}\n", t.code.find("_heads(", attention)) - attention);
  EXPECT_EQ(attention_kernel.find("double"), std::string::npos) << attention_kernel;
  EXPECT_NE(t.code.find("extern \"C\""), std::string::npos);
  EXPECT_EQ(t.code.find("torch"), std::string::npos);   // generated code never includes LibTorch
  EXPECT_EQ(t.fallbacks, 0);
}

// A softmax kernel (scale + softmax of attention weights the model returns, so no attention
// kernel takes it) sums its denominator in float, as LibTorch's softmax does.
TEST(CppBackend, SoftmaxKernelSumsInFloatAsLibTorchDoes) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("attention_patterns")), strict_cpp(), nullptr);
  auto in = inputs_for({"f32[2,32,48]"});
  expect_compiled_matches_eager(m, in);
  Totals t = totals(m);
  size_t softmax = t.code.find("// aten::mul, aten::softmax");
  ASSERT_NE(softmax, std::string::npos) << t.code;
  std::string softmax_kernel = t.code.substr(softmax, t.code.find("\n}\n", softmax) - softmax);
  EXPECT_EQ(softmax_kernel.find("double"), std::string::npos) << softmax_kernel;
  EXPECT_NE(softmax_kernel.find("float t"), std::string::npos) << softmax_kernel;
}

// TCPROF_LOGS=fusion says why ops stayed in separate kernels: the matmul that reads returned
// attention weights runs outside generated code, so the softmax kernel before it cannot take it.
TEST(CppBackend, FusionLogSaysWhyOpsDidNotFuse) {
  at::NoGradGuard no_grad;
  set_log_mask(static_cast<uint32_t>(LogChannel::Fusion));
  ::testing::internal::CaptureStderr();
  CompiledModule m(load_model(sample("attention_patterns")), strict_cpp(), nullptr);
  m.call(inputs_for({"f32[2,32,48]"}));
  std::string log = ::testing::internal::GetCapturedStderr();
  set_log_mask(0);
  EXPECT_NE(log.find("[tcprof:fusion] op "), std::string::npos) << log;
  EXPECT_NE(log.find("softmax]: it runs outside generated code"), std::string::npos) << log;
}

TEST(CppBackend, DynamicBatchAndSequenceReuseOneCompile) {
  at::NoGradGuard no_grad;
  CompileOptions o = strict_cpp();
  o.dynamic = {parse_dim_ref("0:0"), parse_dim_ref("0:1")};
  CompiledModule m(load_model(sample("gpt_tiny")), o, nullptr);
  for (const char* spec : {"i64[2,16](0,512)", "i64[3,9](0,512)", "i64[4,31](0,512)"}) {
    auto in = inputs_for({spec});
    expect_compiled_matches_eager(m, in);
  }
  EXPECT_EQ(m.stats().compiles, 1);
}

TEST(CppBackend, BatchNormFoldsIntoConvolutionAndDepthwiseIsGenerated) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("mobilenet_v2")), strict_cpp(), nullptr);
  auto in = inputs_for({"f32[1,3,224,224]"});
  expect_compiled_matches_eager(m, in);
  Totals t = totals(m);
  std::string steps = t.ir.substr(t.ir.find("steps:"));
  EXPECT_EQ(steps.find("batch_norm"), std::string::npos) << "batch norm was not folded";
  // The classifier at batch 1 is a matrix-vector product (BLAS gemv), not a one-row GEMM.
  EXPECT_NE(steps.find("_linear_gemv"), std::string::npos) << steps;
  if (!onednn_layout_enabled()) {  // with oneDNN, the layout pass takes them (layout_pass_test.cpp)
    EXPECT_EQ(t.native, 17);  // MobileNetV2's depthwise convolutions
    EXPECT_NE(t.code.find("depthwise conv2d"), std::string::npos);
  }
  // A different batch runs through the same kernels (batch is a kernel argument).
  auto batch2 = inputs_for({"f32[2,3,224,224]"});
  expect_compiled_matches_eager(m, batch2);
}

// A second compile of the same graph with the same cache reads the autotune decisions (and the
// first compile's timings) instead of timing again; another thread count is timed afresh; a
// damaged decision file is re-timed, not an error, and rewritten.
TEST(CppBackend, AutotuneDecisionsAreCachedWithTheKernels) {
  at::NoGradGuard no_grad;
  TempDir dir;
  CompileOptions options = strict_cpp();
  options.kernel_cache_dir = dir.file("cache");
  auto in = inputs_for({"f32[2,3,32,32]"});
  auto autotune_record = [&] {
    CompiledModule m(load_model(sample("cnn")), options, nullptr);
    expect_compiled_matches_eager(m, in);
    std::string ir = totals(m).ir;
    size_t at = ir.find("\nautotune (");
    return at == std::string::npos ? std::string() : ir.substr(at);
  };
  const std::string cached = "read from the autotune cache";
  std::string first = autotune_record();
  ASSERT_FALSE(first.empty()) << "the cnn sample has direct kernels (max pool, depthwise conv)";
  EXPECT_EQ(first.find(cached), std::string::npos) << first;
  std::string second = autotune_record();
  EXPECT_NE(second.find(cached), std::string::npos) << second;
  EXPECT_EQ(second.substr(second.find(":\n")), first.substr(first.find(":\n")));

  const int threads = at::get_num_threads();
  at::set_num_threads(threads == 1 ? 2 : 1);
  std::string other_threads = autotune_record();
  at::set_num_threads(threads);
  EXPECT_EQ(other_threads.find(cached), std::string::npos) << other_threads;

  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.file("cache") + "/autotune")) {
    if (e.is_regular_file()) std::ofstream(e.path()) << "tcprof-autotune 1\nnot numbers\n";
  }
  EXPECT_EQ(autotune_record().find(cached), std::string::npos);
  EXPECT_NE(autotune_record().find(cached), std::string::npos);
}

TEST(CppBackend, NonContiguousAndBroadcastInputsAreReadThroughStrides) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("cnn")), strict_cpp(), nullptr);
  at::Tensor base = at::randn({3, 2, 32, 32}).permute({1, 0, 2, 3});  // channels-major storage
  ASSERT_FALSE(base.is_contiguous());
  std::vector<c10::IValue> in{base};
  expect_compiled_matches_eager(m, in);
}

// A number finite as a double but not as a float (1e39) is the float's infinity in the kernel, as
// in eager's f32 arithmetic: once it was printed "inff", and the graph did not compile.
TEST(CppBackend, ANumberBeyondFloatsRangeIsItsInfinity) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  const std::string path = testing::save_scripted("def forward(self, x):\n  return torch.relu(x * 1e39 - 3.5e38) + 1.0\n",
                                                  dir.file("beyond_float.pt"));
  CompiledModule m(load_model(path), strict_cpp(), nullptr);
  expect_compiled_matches_eager(m, inputs_for({"f32[4,33]"}));
  EXPECT_GT(testing::totals(m).kernels, 0);
}

// With grad mode on and parameters that require grad, the graph compiles as training graphs
// (compiler/autodiff): its outputs carry the compiled backward as their grad_fn.
TEST(CppBackend, AGraphThatNeedsAutogradCompilesItsBackward) {
  at::AutoGradMode grad(true);
  CompiledModule m(load_model(sample("cnn")), strict_cpp(), nullptr);
  for (auto p : m.model().module.parameters()) p.set_requires_grad(true);
  auto in = inputs_for({"f32[2,3,32,32]"});
  m.call(in);  // captures (its result comes from the capture's run)
  c10::IValue out = m.call(in);
  expect_same_output(out, m.call_eager(in));
  ASSERT_TRUE(out.toTensor().requires_grad());
  EXPECT_EQ(out.toTensor().grad_fn()->name(), "tcprof::CompiledBackward");
  const CompileReport& r = m.frames()[0]->entries[0]->compiled->report();
  EXPECT_EQ(r.ir.rfind("# training:", 0), 0u);
  EXPECT_GT(r.kernels, 0);
  for (const auto& h : r.hints) EXPECT_NE(h.kind, "autograd") << h.message;
}

// A graph whose tensors are not on the CPU runs through LibTorch with a `no_gpu_codegen` hint: the
// seam a CUDA code generator fills. The meta device stands in for a GPU on machines without one
// (its tensors have shapes and no data, and LibTorch runs every op of this graph on it).
TEST(CppBackend, AGraphOffTheCpuRunsThroughLibTorchWithANoGpuCodegenHint) {
  EXPECT_TRUE(make_cpp_backend()->generates_code_for(c10::Device(c10::kCPU)));
  EXPECT_FALSE(make_cpp_backend()->generates_code_for(c10::Device(c10::kCUDA, 0)));
  EXPECT_TRUE(make_eager_backend()->generates_code_for(c10::Device(c10::kCUDA, 0)));
  CompiledModule m(load_model(sample("four_inputs")), strict_cpp(), nullptr);
  std::vector<c10::IValue> in;
  for (auto& v : inputs_for({"f32[4,8]", "f32[4,8]", "f32[4,8]", "f32[4,8]"})) in.push_back(v.toTensor().to(at::kMeta));
  c10::IValue out = m.call(in);
  EXPECT_EQ(out.toTensor().device().type(), c10::kMeta);
  EXPECT_EQ(out.toTensor().sizes(), (std::vector<int64_t>{4, 8}));
  const CompileReport& r = m.frames()[0]->entries[0]->compiled->report();
  ASSERT_FALSE(r.hints.empty());
  EXPECT_EQ(r.hints[0].kind, "no_gpu_codegen");
  EXPECT_NE(r.hints[0].message.find("graph on meta runs eagerly through LibTorch"), std::string::npos) << r.hints[0].message;
  EXPECT_EQ(r.kernels, 0);
}

// Through the CLI, as users run it: records, cache hits, compile failures.
std::string tcprof_cmd(const std::string& env, const std::string& args) {
  return fmt::format("env {} {} {}", env, TCPROF_BIN, args);
}

TEST(CppBackendCli, RecordsPhasesCodeAndASecondProcessHitsTheCache) {
  TempDir dir;
  std::string cache = dir.file("cache");
  std::string env = "TCPROF_CACHE_DIR=" + cache;
  std::string args = fmt::format("run {} --input 'i64[2,16](0,512)' --iters 2 --verify --db ", sample("gpt_tiny"));
  auto first = run_command(tcprof_cmd(env, args + dir.file("a.db")), true);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  auto second = run_command(tcprof_cmd(env, args + dir.file("b.db")), true);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  struct stat st {};
  ASSERT_EQ(stat(cache.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  auto phases_of = [](const std::string& db) {
    return testing::query_db(db, "select group_concat(phase, ',') from compile_phases");
  };
  std::string phases = phases_of(dir.file("a.db"));
  for (const char* p : {"capture", "decompose", "lower", "schedule", "codegen", "cc", "load"}) {
    EXPECT_NE(phases.find(p), std::string::npos) << p << " in " << phases;
  }
  auto query = [](const std::string& db, const std::string& sql) {
    return testing::query_db(db, sql);
  };
  EXPECT_EQ(query(dir.file("a.db"), "select status || ':' || cache_hit from compiles"), "ok:0\n");
  EXPECT_EQ(query(dir.file("b.db"), "select status || ':' || cache_hit from compiles"), "ok:1\n");
  EXPECT_NE(query(dir.file("a.db"), "select code from graphs").find("#pragma omp simd"), std::string::npos);
}

TEST(CppBackendCli, AMissingCompilerFallsBackToEagerAndStrictFails) {
  TempDir dir;
  std::string env = fmt::format("TCPROF_CACHE_DIR={} TCPROF_CXX=/nonexistent/g++", dir.file("cache"));
  // gpt_tiny has generated kernels (layer norms, attention); the cnn sample's chain needs none.
  std::string args = fmt::format("run {} --input 'i64[2,16](0,512)' --iters 2 --verify --db ", sample("gpt_tiny"));
  auto r = run_command(tcprof_cmd(env, args + dir.file("a.db")), true);
  ASSERT_EQ(r.exit_code, 0) << r.output;  // the run completes, eagerly, with the right answer
  EXPECT_NE(r.output.find("outputs verified"), std::string::npos) << r.output;
  const std::string hints = testing::query_db(dir.file("a.db"), "select c.status, h.kind, h.message from compiles c join "
                                                                "perf_hints h on h.compile_id = c.id where h.kind = 'compile_failed'");
  EXPECT_NE(hints.find("compile_failed|compile_failed|"), std::string::npos) << hints;
  EXPECT_NE(hints.find("TCPROF_CXX"), std::string::npos) << hints;  // says what to do

  auto strict = run_command(tcprof_cmd(env, args + dir.file("b.db") + " --strict"), true);
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  EXPECT_NE(strict.output.find("compile_failed"), std::string::npos) << strict.output;
}

TEST(CppBackendCli, ExplainListsKernelsPerGraph) {
  TempDir dir;
  auto r = run_command(tcprof_cmd("TCPROF_CACHE_DIR=" + dir.file("cache"),
                                  fmt::format("explain {} --input 'i64[2,16](0,512)' --json --db {}", sample("gpt_tiny"),
                                              dir.file("a.db"))));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  const auto& g = j["graphs"][0];
  EXPECT_GT(g["kernels"].template get<int>(), 4);
  EXPECT_LT(g["unique_kernels"].template get<int>(), g["kernels"].template get<int>());
  EXPECT_GT(g["fused_ops"].template get<int>(), 10);
  EXPECT_GT(g["extern_calls"].template get<int>(), 0);
  bool softmax_group = false;
  for (const auto& k : g["kernel_groups"]) softmax_group |= k.template get<std::string>().find("aten::softmax") != std::string::npos;
  EXPECT_TRUE(softmax_group);
}

}  // namespace
}  // namespace tcprof
