// Directly generated kernels for two ops eager runs on slow paths: depthwise convolution
// (MobileNet's, ~36% of its eager time) and max pooling (~11% of ResNet18's). Window geometry is
// baked in as constants, so the per-output-column bounds are computed here, not at run time, and
// the innermost loop over output columns is a plain (vectorisable) multiply-add or max. The batch
// size is a kernel argument; the runtime checks the rest of the shape before calling.
#include <cmath>

#include <fmt/format.h>

#include "compiler/codegen_cpp.h"

namespace tcprof {
namespace {

// Output columns [lo, hi) whose input column ow*s - p + k*d lies inside [0, w).
std::pair<int64_t, int64_t> column_range(const NativeOpKernel& k, int64_t kw) {
  int64_t off = -k.pw + kw * k.dw;
  int64_t lo = 0;
  while (lo < k.ow && lo * k.sw + off < 0) ++lo;
  int64_t hi = k.ow;
  while (hi > lo && (hi - 1) * k.sw + off >= k.w) --hi;
  return {lo, hi};
}

std::string input_index(const NativeOpKernel& k, int64_t kw) {
  int64_t off = -k.pw + kw * k.dw;
  std::string idx = k.sw == 1 ? "ow" : fmt::format("ow * {}", k.sw);
  if (off != 0) idx += fmt::format(" + ({})", off);
  return idx;
}

std::string window_loops(const NativeOpKernel& k, bool conv) {
  std::string s;
  s += fmt::format("      for (int64_t kh = 0; kh < {}; ++kh) {{\n", k.kh);
  s += fmt::format("        const int64_t ih = oh * {} - {} + kh * {};\n", k.sh, k.ph, k.dh);
  s += fmt::format("        if (ih < 0 || ih >= {}) continue;\n", k.h);
  s += fmt::format("        const float* __restrict xr = xp + ih * {};\n", k.w);
  for (int64_t kw = 0; kw < k.kw; ++kw) {
    auto [lo, hi] = column_range(k, kw);
    if (lo >= hi) continue;
    if (conv) s += fmt::format("        {{ const float wv = wp[kh * {} + {}];\n", k.kw, kw);
    else s += "        {\n";
    s += fmt::format("          #pragma omp simd\n          for (int64_t ow = {}; ow < {}; ++ow) {{\n", lo, hi);
    s += fmt::format("            const float v = xr[{}];\n", input_index(k, kw));
    if (conv) s += "            row[ow] += wv * v;\n";
    else s += "            row[ow] = (v > row[ow] || v != v) ? v : row[ow];\n";
    s += "          }\n        }\n";
  }
  s += "      }\n";
  return s;
}

}  // namespace

std::string generate_native_kernel(const NativeOpKernel& k, const std::string& name) {
  bool conv = k.kind == NativeOpKernel::Kind::DepthwiseConv2d;
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
  } else {
    s += "    const float init = -std::numeric_limits<float>::infinity();\n";
  }
  s += fmt::format("    for (int64_t oh = 0; oh < {}; ++oh) {{\n", k.oh);
  s += fmt::format("      float* __restrict row = yp + oh * {};\n", k.ow);
  s += fmt::format("      for (int64_t ow = 0; ow < {}; ++ow) row[ow] = init;\n", k.ow);
  s += window_loops(k, conv);
  if (k.has_clamp) {
    s += fmt::format("      #pragma omp simd\n      for (int64_t ow = 0; ow < {}; ++ow) {{\n        float v = row[ow];\n", k.ow);
    if (std::isfinite(k.clamp_hi)) s += fmt::format("        v = v > {0:#.9g}f ? {0:#.9g}f : v;\n", k.clamp_hi);
    s += fmt::format("        v = v < {0:#.9g}f ? {0:#.9g}f : v;\n", k.clamp_lo);
    s += "        row[ow] = v;\n      }\n";
  }
  s += "    }\n  }\n}\n";
  s += fmt::format("extern \"C\" void {}(const void* const* in_, void* const* out_, const int64_t* sz, const int64_t*) {{\n", name);
  s += fmt::format("  const int64_t planes = sz[0] * {};\n", k.c);
  s += "  #pragma omp parallel for schedule(static) if (planes > 1)\n";
  s += fmt::format("  for (int64_t c = 0; c < planes; ++c) {}_range(in_, out_, c, c + 1);\n}}\n", name);
  return s;
}

}  // namespace tcprof
