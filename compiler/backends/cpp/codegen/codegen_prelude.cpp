// The fixed start of every generated translation unit: standard headers only (never LibTorch, so a
// unit compiles in well under a second) and float math written as plain arithmetic, so that GCC
// vectorises loops that call it (libm's expf/erff/tanhf are scalar calls without -ffast-math).
// Accuracy: exp ~1 ulp (Cephes), erf 2.5e-7 relative, erfc 2.2e-6 and the normal CDF below 0 0.9e-6
// relative (rational fits), tanh ~2e-7 relative (tests/compiler/prelude_math_test.cpp
// checks each against double precision).
#include "compiler/backends/cpp/codegen/codegen_cpp.h"

namespace tcprof {

const char* codegen_prelude() {
  return R"PRELUDE(#include <cstdint>
#include <cstring>
#include <cmath>
#include <limits>
#include <algorithm>

namespace {

// a * b + c with one rounding where the CPU has FMA, else two. Kernels are built with
// -ffp-contract=off (kernel_library.cpp) so that each primitive rounds where eager's op does; the
// math here asks for its fused multiply-adds by name.
template <typename T>
inline T tc_fma(T a, T b, T c) {
#ifdef __FMA__
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// exp(t - n ln 2) for the integer n nearest t / ln 2 (Cephes: ln 2 in two parts, degree-7
// polynomial), the part of exp that does not depend on how n was found.
inline float tc_exp_reduced(float t, float n) {
  float r = tc_fma(-n, 0.693359375f, t);
  r = tc_fma(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = tc_fma(p, r, 1.3981999507e-3f);
  p = tc_fma(p, r, 8.3334519073e-3f);
  p = tc_fma(p, r, 4.1665795894e-2f);
  p = tc_fma(p, r, 1.6666665459e-1f);
  p = tc_fma(p, r, 5.0000001201e-1f);
  p = tc_fma(p, r * r, r) + 1.0f;
  return p;
}

inline float tc_exp(float x) {
  float xc = x < -87.0f ? -87.0f : (x > 88.7f ? 88.7f : x);
  float n = std::floor(tc_fma(xc, 1.44269504088896341f, 0.5f));
  float p = tc_exp_reduced(xc, n);
  int32_t bits = (static_cast<int32_t>(n) + 126) << 23;  // 2^(n-1): n = 128 stays finite
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  float res = p * scale * 2.0f;
  res = x > 88.72283f ? std::numeric_limits<float>::infinity() : res;
  res = x < -87.0f ? 0.0f : res;
  return x != x ? x : res;
}

// exp(t) for -87 < t <= 0, as tc_exp without its range and NaN checks (NaN still propagates):
// a third fewer operations where the argument is known to be in range. The integer part comes
// from the 1.5 * 2^23 rounding trick, its bits shifted straight into the exponent.
inline float tc_exp_neg(float t) {
  float k = tc_fma(t, 1.44269504088896341f, 12582912.0f);
  float n = k - 12582912.0f;
  float p = tc_exp_reduced(t, n);
  uint32_t bits;  // unsigned: no overflow for the arguments a caller computes and then discards
  std::memcpy(&bits, &k, sizeof bits);
  bits = (bits << 23) + (127u << 23);  // 2^n
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// erfc's rational fit (scripts/fit_erf.py): erfc(a) = exp(-a^2) P(a) / Q(a) for 0 <= a <= 6,
// relative-accurate (the tail keeps its digits where 1 - erf would cancel to a few float ulps of
// 1). A TcErfcFit is that fit read in t = a / scale with P also times p_scale: its coefficients are
// rescaled at compile time, so each use evaluates plain polynomials in its own variable.
struct TcErfcFit {
  float p[4], q[5];  // highest degree first
  constexpr TcErfcFit(double scale, double p_scale) : p{}, q{} {
    const double fp[4] = {8.468785137e-02, 4.423569143e-01, 9.788392186e-01, 1.0};
    const double fq[5] = {1.501527429e-01, 7.830016613e-01, 1.820206761e+00, 2.107210398e+00, 1.0};
    for (int i = 0; i < 4; ++i) {
      double s = p_scale;
      for (int k = i; k < 3; ++k) s *= scale;
      p[i] = static_cast<float>(fp[i] * s);
    }
    for (int i = 0; i < 5; ++i) {
      double s = 1;
      for (int k = i; k < 4; ++k) s *= scale;
      q[i] = static_cast<float>(fq[i] * s);
    }
  }
};

// P(t) / Q(t) of a fit (unrolled, so that the loops calling it still vectorise).
inline float tc_fit_ratio(const TcErfcFit& f, float t) {
  float p = f.p[0], q = f.q[0];
#pragma GCC unroll 4
  for (int i = 1; i < 4; ++i) p = tc_fma(p, t, f.p[i]);
#pragma GCC unroll 4
  for (int i = 1; i < 5; ++i) q = tc_fma(q, t, f.q[i]);
  return p / q;
}

constexpr TcErfcFit kTcErfc(1.0, 1.0);
inline float tc_erfc_nonneg(float a) { return tc_exp_neg(-(a * a)) * tc_fit_ratio(kTcErfc, a); }

// a P(a^2) / Q(a^2) below 1.75 (erf of tiny values keeps its relative accuracy), 1 - erfc beyond;
// both evaluated, so loops that call it still vectorise. NaN stays NaN through every step.
inline float tc_erf(float x) {
  float a = std::fabs(x);
  float s = a * a;
  float p = 3.665658296e-04f;
  p = tc_fma(p, s, 3.729459271e-02f);
  p = tc_fma(p, s, 1.379995644e-01f);
  p = tc_fma(p, s, 1.128379226e+00f);
  float q = 6.898114923e-03f;
  q = tc_fma(q, s, 8.492158353e-02f);
  q = tc_fma(q, s, 4.556334019e-01f);
  q = tc_fma(q, s, 1.0f);
  float big = 1.0f - tc_erfc_nonneg(a > 6.0f ? 6.0f : a);
  return std::copysign(a < 1.75f ? a * p / q : big, x);
}

// The standard normal CDF, 0.5 * erfc(-x / sqrt 2), so that x * Phi(x) (GELU) keeps its relative
// accuracy for negative x instead of cancelling in 0.5 * (1 + erf). The lower tail is
// Phi(-|x|) = exp(-x^2 / 2) P(|x|) / Q(|x|): erfc's fit read in |x| (and halved), so that nothing
// clamps or scales the argument and x^2 / 2 is exact. A GELU loop is 37 AVX-512 instructions a
// vector where going through tc_erfc_nonneg took 45: over [3136, 384] at one thread 0.70 -> 0.51 ms
// (LibTorch's gelu 0.58), and 2.2 -> 0.9e-6 relative.
// Below x = -5.5426 (Phi < 2^-26) it is 0, as eager's 0.5 * (1 + erf) is once erf rounds to -1:
// GELU is then -0 there too, and -0 * inf is eager's NaN (fuzz case 166923019082439). That test
// also keeps exp's argument, -x^2 / 2, above -15.4 wherever its result is used.
constexpr TcErfcFit kTcNormalTail(0.70710678118654752440, 0.5);  // Phi(-t) = erfc(t / sqrt 2) / 2
inline float tc_norm_cdf(float x) {
  float a = std::fabs(x);
  float lower = tc_exp_neg(-0.5f * (x * x)) * tc_fit_ratio(kTcNormalTail, a);  // Phi(-|x|); NaN stays NaN
  lower = a > 5.54259405f ? 0.0f : lower;
  return x < 0 ? lower : 1.0f - lower;
}

// GELU's derivative, Phi(x) + x phi(x): one exp(-x^2 / 2) for both terms, since Phi's lower tail
// is that exp times erfc's fit (tc_norm_cdf), where the gradient as erf and exp ops took two
// transcendental evaluations (GPT's MLP gradient, [4, 128, 1024] at one thread: see backend.md).
// Phi is 0 below x = -5.5426 as in tc_norm_cdf; exp's argument below -87 gives 0 (phi has
// underflowed in eager's float there too) and keeps tc_exp_neg in its range.
inline float tc_gelu_grad(float x) {
  float a = std::fabs(x);
  float t = -0.5f * (x * x);
  float e = t < -87.0f ? 0.0f : tc_exp_neg(t);  // NaN compares false and propagates
  float lower = e * tc_fit_ratio(kTcNormalTail, a);
  lower = a > 5.54259405f ? 0.0f : lower;
  float cdf = x < 0 ? lower : 1.0f - lower;
  return tc_fma(x, e * 0.398942280401432678f, cdf);
}
inline double tc_gelu_grad(double x) {
  return 0.5 * std::erfc(x * -0.70710678118654752440) + x * (std::exp(-0.5 * (x * x)) * 0.398942280401432678);
}

inline float tc_tanh(float x) {
  float z = std::fabs(x);
  float x2 = x * x;
  float s = 21844.0f / 6081075.0f;
  s = tc_fma(s, x2, -1382.0f / 155925.0f);
  s = tc_fma(s, x2, 62.0f / 2835.0f);
  s = tc_fma(s, x2, -17.0f / 315.0f);
  s = tc_fma(s, x2, 2.0f / 15.0f);
  s = tc_fma(s, x2, -1.0f / 3.0f);
  float small = tc_fma(x * x2, s, x);
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
