// The fixed start of every generated translation unit: standard headers only (never LibTorch, so a
// unit compiles in well under a second) and float math written as plain arithmetic, so that GCC
// vectorises loops that call it (libm's expf/erff/tanhf are scalar calls without -ffast-math).
// Accuracy: exp ~1 ulp (Cephes), erf <= 4e-7 relative (rational fit), tanh ~2e-7 relative
// (tests/compiler/prelude_math_test.cpp checks each against double precision).
#include "compiler/backends/cpp/codegen/codegen_cpp.h"

namespace tcprof {

const char* codegen_prelude() {
  return R"PRELUDE(#include <cstdint>
#include <cstring>
#include <cmath>
#include <limits>
#include <algorithm>

namespace {

inline float tc_exp(float x) {
  float xc = x < -87.0f ? -87.0f : (x > 88.7f ? 88.7f : x);
  float n = std::floor(xc * 1.44269504088896341f + 0.5f);
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  int32_t bits = (static_cast<int32_t>(n) + 126) << 23;  // 2^(n-1): n = 128 stays finite
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  float res = p * scale * 2.0f;
  res = x > 88.72283f ? std::numeric_limits<float>::infinity() : res;
  res = x < -87.0f ? 0.0f : res;
  return x != x ? x : res;
}

// x P(x^2) / Q(x^2) on |x| <= 3.95 (erf is 1 in float beyond), fitted by scripts/fit_erf.py: one
// division and no exp, so GELU's kernel is ~2.5x faster than with an exp-based erfc, and erf of
// tiny values keeps its relative accuracy.
inline float tc_erf(float x) {
  float c = x < -3.95f ? -3.95f : (x > 3.95f ? 3.95f : x);
  float s = c * c;
  float p = 2.025908771e-06f;
  p = p * s + 2.846832504e-04f;
  p = p * s + 3.808032023e-03f;
  p = p * s + 5.287503824e-02f;
  p = p * s + 1.915475279e-01f;
  p = p * s + 1.128379107e+00f;
  float q = 3.783157445e-05f;
  q = q * s + 1.170691452e-03f;
  q = q * s + 1.505483035e-02f;
  q = q * s + 1.145584360e-01f;
  q = q * s + 5.030872226e-01f;
  q = q * s + 1.0f;
  float r = c * p / q;
  return x != x ? x : r;
}

inline float tc_tanh(float x) {
  float z = std::fabs(x);
  float x2 = x * x;
  float s = 21844.0f / 6081075.0f;
  s = s * x2 - 1382.0f / 155925.0f;
  s = s * x2 + 62.0f / 2835.0f;
  s = s * x2 - 17.0f / 315.0f;
  s = s * x2 + 2.0f / 15.0f;
  s = s * x2 - 1.0f / 3.0f;
  float small = x + x * x2 * s;
  float big = 1.0f - 2.0f / (tc_exp(2.0f * z) + 1.0f);
  big = x < 0 ? -big : big;
  return z < 0.4f ? small : big;
}

inline float tc_sigmoid(float x) { return 1.0f / (1.0f + tc_exp(-x)); }
inline double tc_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

template <typename T> inline T tc_max(T a, T b) { return (a > b || a != a) ? a : b; }
template <typename T> inline T tc_min(T a, T b) { return (a < b || a != a) ? a : b; }

}  // namespace

)PRELUDE";
}

}  // namespace tcprof
