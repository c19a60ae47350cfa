// The attention kernel (schedule/plan_attention.h, codegen/codegen_attention.cpp). The generated
// kernel itself, compiled with this machine's vector flags and without them (the portable path),
// against LibTorch's matmul / masked_fill / softmax / matmul on awkward shapes, masks and values;
// then the graph level: every form in the attention_patterns sample is fused and matches eager
// (inf and NaN included), the one whose weights are read elsewhere is left alone, and the GPT's
// four blocks run through it.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <ostream>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ATen/core/grad_mode.h>

#include "compiler/backends/cpp/codegen/codegen_cpp.h"
#include "compiler/toolchain/kernel_library.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/test_support.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace tcprof {
namespace {

using testing::expect_compiled_matches_eager;
using testing::expect_same_output;
using testing::inputs_for;
using testing::sample;
using testing::strict_cpp;

using KernelFn = void (*)(const void* const*, void* const*, const int64_t*, const int64_t*);

struct AttentionCase {
  const char* name;
  int64_t b, h, t, s, d, dv;
  const char* mask;  // "none", "causal", "band", "keys", "blank"
  bool divide;
  bool inf_in_v;     // an inf in v at a key the causal mask removes from most rows
  float q_scale = 1;  // large: most of a row's weights are below exp(-87), 0 in float
};

void PrintTo(const AttentionCase& c, std::ostream* os) {
  *os << c.name << " [" << c.b << "," << c.h << "] T " << c.t << " S " << c.s << " D " << c.d << " Dv " << c.dv << " mask "
      << c.mask;
}

at::Tensor make_mask(const AttentionCase& c) {
  std::string m = c.mask;
  at::Tensor keep = at::ones({c.t, c.s}, at::kBool);
  if (m == "causal" || m == "blank") keep = at::ones({c.t, c.s}).tril(0).to(at::kBool);
  if (m == "band") keep = at::ones({c.t, c.s}).tril(0).triu(-3).to(at::kBool);
  if (m == "keys") keep = (at::arange(c.s) < c.s - 5).view({1, c.s}).expand({c.t, c.s}).contiguous();
  if (m == "blank") keep[0] = false;
  return keep.logical_not();
}

// How the kernel is built: this machine's vector flags with the default compiler (GCC's vector
// builtins: 16-float tiles on an AVX-512 machine), the same without AVX-512 (8-float tiles), without
// vector flags (the portable loops), or with Clang (<immintrin.h>).
enum class Build { Vector, NoAvx512, Portable, Clang };
const char* build_name(Build b) {
  return b == Build::Vector ? "vector" : b == Build::NoAvx512 ? "no_avx512" : b == Build::Portable ? "portable" : "clang";
}
void PrintTo(Build b, std::ostream* os) { *os << build_name(b); }

// A kernel built by Clang brings LLVM's OpenMP runtime into the process, and LeakSanitizer's
// stop-the-world tracer dies (SIGSEGV) at exit when that runtime's worker threads exist. In a
// sanitizer build (make check-sanitize-all) this process's leaks are checked now, before it loads
// the runtime, and not again at exit; ASan and UBSan stay on.
void check_leaks_before_loading_llvm_openmp() {
#if defined(__SANITIZE_ADDRESS__)
  __lsan_do_leak_check();
#endif
}

class GeneratedAttention : public ::testing::TestWithParam<std::tuple<AttentionCase, Build>> {};

TEST_P(GeneratedAttention, MatchesLibTorch) {
  const auto& [c, how] = GetParam();
  if (how == Build::Clang && !std::filesystem::exists("/usr/bin/clang++")) GTEST_SKIP() << "no /usr/bin/clang++";
  at::NoGradGuard no_grad;
  WindowKernel k;
  k.kind = WindowKernel::Kind::Attention;
  WindowKernel::AttentionShape& a = k.attention;
  a.t = c.t, a.s = c.s, a.d = c.d, a.dv = c.dv;
  a.scale = c.divide ? std::sqrt(static_cast<double>(c.d)) : 1.0 / std::sqrt(static_cast<double>(c.d));
  a.divide = c.divide;
  at::Tensor mask = make_mask(c);
  if (std::string(c.mask) != "none") {
    for (int64_t i = 0; i < c.t; ++i) {
      at::Tensor kept = mask[i].logical_not().nonzero();
      a.keep_lo.push_back(kept.numel() ? static_cast<int32_t>(kept.min().item<int64_t>()) : 0);
      a.keep_hi.push_back(kept.numel() ? static_cast<int32_t>(kept.max().item<int64_t>() + 1) : 0);
    }
  }
  testing::TempDir dir;
  KernelLibraryOptions o;
  o.cache_dir = dir.file("cache");
  if (how == Build::Portable) o.extra_flags = {"-mno-avx2", "-mno-fma"};  // also turns AVX-512 off
  if (how == Build::NoAvx512) o.extra_flags = {"-mno-avx512f"};           // and the AVX-512 extensions
  if (how == Build::Clang) {
    o.compiler = "/usr/bin/clang++";
    check_leaks_before_loading_llvm_openmp();
  }
  KernelLibraryBuilder builder(o);
  std::string source = std::string(codegen_prelude()) + generate_attention_kernel(k, "attention_under_test");
  auto built = builder.compile(source);
  auto fn = reinterpret_cast<KernelFn>(built.library->symbol("attention_under_test"));

  // q and v are strided views of one projection, as in a GPT; kT a transposed view.
  at::manual_seed(5);
  at::Tensor qkv = at::randn({c.b, c.t, c.h, 2 * c.d}), kv = at::randn({c.b, c.s, c.h, c.d + c.dv});
  qkv.narrow(3, 0, c.d).mul_(c.q_scale);
  at::Tensor q = qkv.narrow(3, 0, c.d).transpose(1, 2), kt = kv.narrow(3, 0, c.d).transpose(1, 2).transpose(2, 3);
  at::Tensor v = kv.narrow(3, c.d, c.dv).transpose(1, 2);
  if (c.inf_in_v) v[0][0][c.s - 2][0] = std::numeric_limits<float>::infinity();
  at::Tensor scores = q.matmul(kt);
  scores = c.divide ? scores / a.scale : scores * a.scale;
  at::Tensor masked = scores.masked_fill(mask, -std::numeric_limits<double>::infinity());
  at::Tensor want = at::softmax(masked, -1).matmul(v);
  if (c.q_scale > 1) {
    at::Tensor underflow = (masked - masked.amax(-1, true) < -87).logical_and(mask.logical_not());
    EXPECT_TRUE(underflow.any().item<bool>()) << "the case no longer has kept keys whose weight underflows";
  }

  at::Tensor got = at::empty({c.b, c.h, c.t, c.dv});
  const void* in[3] = {q.data_ptr(), kt.data_ptr(), v.data_ptr()};
  void* out[1] = {got.data_ptr()};
  int64_t sizes[2] = {c.b, c.h};
  std::vector<int64_t> strides;
  for (const at::Tensor* t : {&q, &kt, &v}) {
    for (int64_t d = 0; d < 4; ++d) strides.push_back(t->stride(d));
  }
  fn(in, out, sizes, strides.data());
  EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-5, /*equal_nan=*/true))
      << c.name << ": max abs diff " << (got - want).abs().nan_to_num(0).max().item<double>() << ", NaN "
      << got.isnan().sum().item<int64_t>() << " vs " << want.isnan().sum().item<int64_t>();
  EXPECT_EQ(got.isnan().sum().item<int64_t>(), want.isnan().sum().item<int64_t>()) << c.name;
  if (c.inf_in_v) {
    // Row 0 keeps key 0 only, yet eager multiplies the inf by its zero weight: NaN in that column.
    EXPECT_TRUE(want[0][0][0][0].isnan().item<bool>()) << "the case no longer exercises the every-key path";
  }
}

const AttentionCase kCases[] = {
    {"gpt_like", 2, 3, 128, 128, 32, 32, "causal", false, false},
    {"odd_sizes", 1, 2, 37, 37, 20, 9, "causal", false, false},
    {"one_query_row", 2, 2, 1, 23, 8, 8, "none", false, false},
    {"cross_no_mask", 1, 2, 13, 40, 12, 20, "none", true, false},
    {"sliding_window", 1, 2, 29, 29, 16, 16, "band", false, false},
    {"key_padding", 2, 1, 21, 21, 8, 24, "keys", true, false},
    {"row_without_keys", 1, 2, 18, 18, 8, 8, "blank", false, false},
    {"inf_in_a_masked_value", 1, 2, 20, 20, 8, 8, "causal", false, true},
    {"vit_like", 1, 3, 197, 197, 64, 64, "none", false, false},  // whole tiles of keys and one short one
    {"underflowing_weights", 1, 2, 45, 45, 16, 16, "causal", false, false, 40},
};

std::string case_name(const AttentionCase& c, Build how) {
  return std::string(c.name) + "_" + build_name(how);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GeneratedAttention,
                         ::testing::Combine(::testing::ValuesIn(kCases), ::testing::Values(Build::Vector, Build::NoAvx512, Build::Portable, Build::Clang)),
                         [](const auto& info) { return case_name(std::get<0>(info.param), std::get<1>(info.param)); });

// The attention kernels of every graph, by their op lists.
std::vector<std::string> attention_groups(const CompiledModule& m) {
  std::vector<std::string> out;
  for (const auto& f : m.frames()) {
    for (const auto& e : f->entries) {
      for (const auto& g : e->compiled->report().kernel_groups) {
        if (g.find("_attention:") != std::string::npos) out.push_back(g.substr(g.find(':') + 2));
      }
    }
  }
  return out;
}

TEST(AttentionKernel, EveryFormInTheSampleIsFusedAndMatchesEager) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("attention_patterns")), strict_cpp(), nullptr);
  for (int64_t call = 0; call < 2; ++call) {
    auto in = inputs_for({"f32[2,32,48]"}, call);
    expect_compiled_matches_eager(m, in);
  }
  std::vector<std::string> groups = attention_groups(m);
  // causal, band, full, key padding, blank row, heads folded into the batch, cross-attention; not
  // the one whose weights are returned.
  EXPECT_EQ(groups.size(), 7u) << fmt::format("{}", fmt::join(groups, "\n"));
  EXPECT_NE(std::find(groups.begin(), groups.end(), "aten::matmul, aten::div, aten::masked_fill, aten::softmax, aten::matmul"),
            groups.end());
  EXPECT_NE(std::find(groups.begin(), groups.end(), "aten::matmul, aten::masked_fill, aten::softmax, aten::matmul"),
            groups.end())
      << "scores without a scale (the key padding form)";
  // Another sequence length: rows and keys that are not whole tiles; a recompile or LibTorch.
  auto in = inputs_for({"f32[3,29,48]"});
  expect_compiled_matches_eager(m, in);
}

TEST(AttentionKernel, InfAndNaNInTheInputsGiveEagersAnswer) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("attention_patterns")), strict_cpp(), nullptr);
  m.call(inputs_for({"f32[2,32,48]"}));
  auto in = inputs_for({"f32[2,32,48]"}, 1);
  at::Tensor x = in[0].toTensor();
  x[0][5][7] = std::numeric_limits<float>::infinity();  // q, k and v of token 5 are +-inf
  x[1][9][3] = std::numeric_limits<float>::quiet_NaN();
  c10::IValue got = m.call(in), want = m.call_eager(in);
  expect_same_output(got, want);
  // Causal row 2 never sees token 5, yet eager multiplies its zero weight by v's inf: NaN.
  EXPECT_TRUE(want.toTupleRef().elements()[0].toTensor()[0][0][2].isnan().all().item<bool>());
}

TEST(AttentionKernel, TheGptsFourBlocksRunThroughIt) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("gpt_tiny")), strict_cpp(), nullptr);
  for (int64_t call = 0; call < 2; ++call) {
    auto in = inputs_for({"i64[2,32](0,512)"}, call);
    expect_compiled_matches_eager(m, in);
  }
  std::vector<std::string> groups = attention_groups(m);
  ASSERT_EQ(groups.size(), 2u);  // gpt_tiny: two blocks
  for (const auto& g : groups) EXPECT_EQ(g, "aten::matmul, aten::mul, aten::masked_fill, aten::softmax, aten::matmul");
}

// nn.MultiheadAttention's fused inference op: its projections through LibTorch around the kernel,
// the same answer at the compiled length and at another (a recompile, or LibTorch's op).
TEST(AttentionKernel, NativeMultiHeadAttentionRunsThroughItAndMatchesEager) {
  at::NoGradGuard no_grad;
  CompiledModule m(load_model(sample("multi_head_attention")), strict_cpp(), nullptr);
  for (int64_t call = 0; call < 2; ++call) {
    auto in = inputs_for({"f32[2,19,48]"}, call);
    expect_compiled_matches_eager(m, in);
  }
  auto nan_in = inputs_for({"f32[2,19,48]"}, 2);
  nan_in[0].toTensor()[1][4][0] = std::numeric_limits<float>::quiet_NaN();
  expect_compiled_matches_eager(m, nan_in);
  EXPECT_EQ(attention_groups(m), std::vector<std::string>{"aten::_native_multi_head_attention"});
  auto other = inputs_for({"f32[1,7,48]"});
  expect_compiled_matches_eager(m, other);
}

}  // namespace
}  // namespace tcprof
