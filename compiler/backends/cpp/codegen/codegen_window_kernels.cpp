// Directly generated kernels for two ops eager runs on slow paths: depthwise convolution
// (MobileNet's, ~36% of its eager time) and max pooling (~11% of ResNet18's); and the epilogue of a
// linear whose GEMM library cannot apply its GELU (below). The window geometry
// is baked in as constants. Rows and columns whose window lies inside the input take the fast
// path: one vectorised loop over output columns with every tap unrolled and the weights in
// registers. Border pixels (padding) take a scalar path with bounds checks. The batch size is a
// kernel argument; the runtime checks the rest of the shape before calling.
#include <cmath>

#include <fmt/format.h>

#include "compiler/backends/cpp/codegen/codegen_cpp.h"

namespace tcprof {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// Output indices [lo, hi) along one axis whose whole window is inside [0, size).
std::pair<int64_t, int64_t> interior(int64_t size, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d) {
  int64_t lo = ceil_div(p, s);
  int64_t last = size - 1 + p - (k - 1) * d;  // o * s <= last
  int64_t hi = last < 0 ? 0 : last / s + 1;
  hi = std::min(hi, out);
  lo = std::min(lo, hi);
  return {lo, hi};
}

std::string combine(bool conv, const std::string& acc, const std::string& v, const std::string& w) {
  if (conv) return fmt::format("{} += {} * {};", acc, w, v);
  return fmt::format("{0} = ({1} > {0} || {1} != {1}) ? {1} : {0};", acc, v);
}

std::string clamp_code(const WindowKernel& k, const std::string& v) {
  if (!k.has_clamp) return "";
  std::string s;
  if (std::isfinite(k.clamp_hi)) s += fmt::format("{0} = {0} > {1:#.9g}f ? {1:#.9g}f : {0}; ", v, k.clamp_hi);
  s += fmt::format("{0} = {0} < {1:#.9g}f ? {1:#.9g}f : {0};", v, k.clamp_lo);
  return s;
}

}  // namespace

// A linear's bias and activation over its [rows, N] output, in place, after a GEMM that ran
// without them (MKL's packed GEMM, BLAS): one pass over the output where the GEMM's bias copy and
// LibTorch's out-of-place gelu took three. The activation is the generated kernels' (lower_ops'
// emit_gelu): x * tc_norm_cdf(x), or the tanh form. Rows are split across threads in blocks.
std::string generate_linear_epilogue(const WindowKernel& k, const std::string& name) {
  const bool tanh = k.activation == WindowKernel::Activation::GeluTanh;
  const int64_t n = k.out_features;
  std::string s = fmt::format("// linear epilogue: bias + {} over [rows, {}], in place\n", tanh ? "gelu (tanh)" : "gelu", n);
  s += fmt::format("static __attribute__((noinline)) void {}_rows(float* __restrict y, const float* __restrict b, int64_t r0, int64_t r1) {{\n", name);
  const std::string activation =
      tanh ? fmt::format("(v * 0.5f) * (tc_tanh((v + ((v * v) * v) * {:#.9g}f) * {:#.9g}f) + 1.0f)", 0.044715, std::sqrt(2.0 / M_PI))
           : "v * tc_norm_cdf(v)";
  for (const char* value : {"yr[j] + b[j]", "yr[j]"}) {  // with and without a bias
    s += value == std::string("yr[j]") ? "  else\n" : "  if (b)\n";
    s += "  for (int64_t r = r0; r < r1; ++r) {\n";
    s += fmt::format("    float* __restrict yr = y + r * {};\n", n);
    s += fmt::format("    #pragma omp simd\n    for (int64_t j = 0; j < {}; ++j) {{\n", n);
    s += fmt::format("      const float v = {};\n      yr[j] = {};\n    }}\n  }}\n", value, activation);
  }
  s += "}\n";
  // Blocks of at least 64K values, so a thread's share is worth its start.
  const int64_t block = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, n));
  s += fmt::format("extern \"C\" void {}(const void* const* in_, void* const* out_, const int64_t* sz, const int64_t*) {{\n", name);
  s += "  float* y = static_cast<float*>(out_[0]);\n  const float* b = static_cast<const float*>(in_[1]);\n";
  s += fmt::format("  const int64_t rows = sz[0], blocks = (rows + {0} - 1) / {0};\n", block);
  s += "  #pragma omp parallel for schedule(static) if (blocks > 1)\n";
  s += fmt::format("  for (int64_t i = 0; i < blocks; ++i) {0}_rows(y, b, i * {1}, std::min<int64_t>(rows, (i + 1) * {1}));\n}}\n",
                   name, block);
  return s;
}

std::string generate_window_kernel(const WindowKernel& k, const std::string& name) {
  if (k.kind == WindowKernel::Kind::Attention) return generate_attention_kernel(k, name);
  if (k.kind == WindowKernel::Kind::LinearGemm) return generate_linear_epilogue(k, name);
  bool conv = k.kind == WindowKernel::Kind::DepthwiseConv2d;
  auto [oh_lo, oh_hi] = interior(k.h, k.oh, k.kh, k.sh, k.ph, k.dh);
  auto [ow_lo, ow_hi] = interior(k.w, k.ow, k.kw, k.sw, k.pw, k.dw);
  std::string s = fmt::format("// {} {}x{} stride {}x{} pad {}x{} on [N,{},{},{}]\n", conv ? "depthwise conv2d" : "max_pool2d",
                              k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, k.c, k.h, k.w);
  // The loops live in a range function that is not inlined into the OpenMP region (GCC does not
  // vectorise simd loops inside the outlined parallel body).
  s += fmt::format("static __attribute__((noinline)) void {}_range(const void* const* in_, void* const* out_, int64_t w0, int64_t w1) {{\n", name);
  s += "  const float* __restrict x = static_cast<const float*>(in_[0]);\n";
  if (conv) {
    s += "  const float* __restrict w = static_cast<const float*>(in_[1]);\n";
    s += "  const float* __restrict b = static_cast<const float*>(in_[2]);\n";
  }
  s += "  float* __restrict y = static_cast<float*>(out_[0]);\n";
  s += "  for (int64_t nc = w0; nc < w1; ++nc) {\n";
  s += fmt::format("    const float* __restrict xp = x + nc * {};\n", k.h * k.w);
  s += fmt::format("    float* __restrict yp = y + nc * {};\n", k.oh * k.ow);
  if (conv) {
    s += fmt::format("    const int64_t c = nc % {};\n", k.c);
    s += fmt::format("    const float* __restrict wp = w + c * {};\n", k.kh * k.kw);
    s += "    const float init = b ? b[c] : 0.0f;\n";
    for (int64_t i = 0; i < k.kh * k.kw; ++i) s += fmt::format("    const float w{} = wp[{}];\n", i, i);
  } else {
    s += "    const float init = -std::numeric_limits<float>::infinity();\n";
  }
  // One output pixel with bounds checks (borders).
  s += "    auto pixel = [&](int64_t oh, int64_t ow) {\n      float acc = init;\n";
  s += fmt::format("      for (int64_t kh = 0; kh < {}; ++kh) {{\n", k.kh);
  s += fmt::format("        const int64_t ih = oh * {} - {} + kh * {};\n", k.sh, k.ph, k.dh);
  s += fmt::format("        if (ih < 0 || ih >= {}) continue;\n", k.h);
  s += fmt::format("        for (int64_t kw = 0; kw < {}; ++kw) {{\n", k.kw);
  s += fmt::format("          const int64_t iw = ow * {} - {} + kw * {};\n", k.sw, k.pw, k.dw);
  s += fmt::format("          if (iw < 0 || iw >= {}) continue;\n", k.w);
  s += fmt::format("          const float v = xp[ih * {} + iw];\n", k.w);
  s += "          " + combine(conv, "acc", "v", fmt::format("wp[kh * {} + kw]", k.kw)) + "\n";
  s += "        }\n      }\n";
  s += "      " + clamp_code(k, "acc") + "\n      return acc;\n    };\n";
  s += fmt::format("    for (int64_t oh = 0; oh < {}; ++oh) {{\n", k.oh);
  s += fmt::format("      float* __restrict row = yp + oh * {};\n", k.ow);
  s += fmt::format("      if (oh < {} || oh >= {}) {{\n", oh_lo, oh_hi);
  s += fmt::format("        for (int64_t ow = 0; ow < {}; ++ow) row[ow] = pixel(oh, ow);\n", k.ow);
  s += "        continue;\n      }\n";
  for (int64_t kh = 0; kh < k.kh; ++kh) {
    s += fmt::format("      const float* __restrict r{} = xp + (oh * {} - {} + {}) * {};\n", kh, k.sh, k.ph, kh * k.dh, k.w);
  }
  s += fmt::format("      for (int64_t ow = 0; ow < {}; ++ow) row[ow] = pixel(oh, ow);\n", ow_lo);
  s += fmt::format("      #pragma omp simd\n      for (int64_t ow = {}; ow < {}; ++ow) {{\n", ow_lo, ow_hi);
  s += fmt::format("        const int64_t ix = ow * {} - {};\n        float acc = init;\n", k.sw, k.pw);
  for (int64_t kh = 0; kh < k.kh; ++kh) {
    for (int64_t kw = 0; kw < k.kw; ++kw) {
      std::string v = fmt::format("r{}[ix + {}]", kh, kw * k.dw);
      s += "        " + combine(conv, "acc", v, fmt::format("w{}", kh * k.kw + kw)) + "\n";
    }
  }
  s += "        " + clamp_code(k, "acc") + "\n        row[ow] = acc;\n      }\n";
  s += fmt::format("      for (int64_t ow = {}; ow < {}; ++ow) row[ow] = pixel(oh, ow);\n", ow_hi, k.ow);
  s += "    }\n  }\n}\n";
  s += fmt::format("extern \"C\" void {}(const void* const* in_, void* const* out_, const int64_t* sz, const int64_t*) {{\n", name);
  s += fmt::format("  const int64_t planes = sz[0] * {};\n", k.c);
  s += "  #pragma omp parallel for schedule(static) if (planes > 1)\n";
  s += fmt::format("  for (int64_t c = 0; c < planes; ++c) {}_range(in_, out_, c, c + 1);\n}}\n", name);
  return s;
}

}  // namespace tcprof
