// The attention kernel (schedule/plan_attention.h), generated per shape: T, S, D, Dv, the scale
// and the mask's kept key range per query row are constants. One (batch, head) at a time:
//   1. kT and v are packed into aligned, zero-padded buffers (they are strided views of the QKV
//      projection in a GPT), and v is probed for inf/NaN;
//   2. per block of 4 query rows, the scores of the keys any of its rows keeps are computed in a
//      register-tiled loop (4 rows x 16 keys, FMA over the head dimension) into a small buffer;
//   3. scale, mask, softmax per row (exp(x - max), sum), then the weighted sum of v rows, divided
//      by the sum once at the end.
// Keys the mask removes from every row of a block are never computed: eager multiplies their zero
// weights by v, so when v holds an inf or NaN (0 * inf = NaN in eager too), that head runs over
// every key instead. Rows whose keys are all masked come out NaN, as eager's softmax makes them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compiler/backends/cpp/codegen/codegen_cpp.h"

namespace tcprof {
namespace {

int64_t round16(int64_t n) { return (n + 15) / 16 * 16; }

// 8-float vectors for the two register-tiled loops. With GCC, its builtins: <immintrin.h> would
// add a third of a second to every unit's compile.
const char* kVectorHelpers = R"HELPERS(#ifndef TC_ATTENTION_HELPERS
#define TC_ATTENTION_HELPERS
#if defined(__AVX2__) && defined(__FMA__) && defined(__GNUC__) && !defined(__clang__)
#define TC_VEC8 1
typedef float tc_f8 __attribute__((vector_size(32), __may_alias__));
static inline tc_f8 tc_load8(const float* p) { return *reinterpret_cast<const tc_f8*>(p); }
static inline void tc_store8(float* p, tc_f8 v) { *reinterpret_cast<tc_f8*>(p) = v; }
static inline tc_f8 tc_splat8(float x) { return tc_f8{x, x, x, x, x, x, x, x}; }  // one vbroadcastss (tc_f8{} + x adds first)
static inline tc_f8 tc_fma8(tc_f8 a, tc_f8 b, tc_f8 c) { return __builtin_ia32_vfmaddps256(a, b, c); }
#elif defined(__AVX2__) && defined(__FMA__)
#define TC_VEC8 1
#include <immintrin.h>
typedef __m256 tc_f8;
static inline tc_f8 tc_load8(const float* p) { return _mm256_load_ps(p); }
static inline void tc_store8(float* p, tc_f8 v) { _mm256_store_ps(p, v); }
static inline tc_f8 tc_splat8(float x) { return _mm256_set1_ps(x); }
static inline tc_f8 tc_fma8(tc_f8 a, tc_f8 b, tc_f8 c) { return _mm256_fmadd_ps(a, b, c); }
#endif
#endif
)HELPERS";

// The per-(batch, head) loop; constants come before it in the same function.
const char* kAttentionBody = R"BODY(
  const float* __restrict q0 = static_cast<const float*>(in_[0]);
  const float* __restrict k0 = static_cast<const float*>(in_[1]);
  const float* __restrict v0 = static_cast<const float*>(in_[2]);
  float* __restrict y0 = static_cast<float*>(out_[0]);
  constexpr int64_t kFloats = D * SP + S * DVP + RB * SP + RB * 16;
  alignas(64) static thread_local float scratch[kFloats];
  // The thread's buffer is looked up once, here: Clang recomputes a thread_local's address at each
  // use, inside the loops, by calling __tls_get_addr, and assumes zmm16-31 survive that call,
  // which the ABI lets it clobber (AddressSanitizer's interceptor does; glibc's slow path after a
  // dlopen can): answers came out wrong. The empty asm makes the pointer opaque.
  float* buf = scratch;
  __asm__("" : "+r"(buf));
  buf = static_cast<float*>(__builtin_assume_aligned(buf, 64));
  float* __restrict ktb = buf;             // kT, [D][SP]
  float* __restrict vb = ktb + D * SP;     // v, [S][DVP]
  float* __restrict sc = vb + S * DVP;     // scores, then weights, [RB][SP]
  float* __restrict tile = sc + RB * SP;   // one output tile, [RB][16]
  for (int64_t bh = bh0; bh < bh1; ++bh) {
    const int64_t b = bh / heads, h = bh % heads;
    const float* qp = q0 + b * st[0] + h * st[1];
    const float* kp = k0 + b * st[4] + h * st[5];
    const float* vp = v0 + b * st[8] + h * st[9];
    const int64_t q_t = st[2], q_d = st[3], k_d = st[6], k_s = st[7], v_s = st[10], v_d = st[11];
    float* __restrict yp = y0 + bh * (T * DV);
    if (k_d == 1) {  // kT is the transpose of a row-major k (a GPT's): rows read contiguously
      for (int64_t j = 0; j < S; ++j) {
        const float* src = kp + j * k_s;
        for (int64_t d = 0; d < D; ++d) ktb[d * SP + j] = src[d];
      }
    } else {
      for (int64_t d = 0; d < D; ++d) {
        for (int64_t j = 0; j < S; ++j) ktb[d * SP + j] = kp[d * k_d + j * k_s];
      }
    }
    for (int64_t d = 0; d < D; ++d) {
      for (int64_t j = S; j < SP; ++j) ktb[d * SP + j] = 0.0f;
    }
    for (int64_t j = 0; j < S; ++j) {
      float* __restrict row = vb + j * DVP;
      const float* src = vp + j * v_s;
      if (v_d == 1) {
        for (int64_t c = 0; c < DV; ++c) row[c] = src[c];
      } else {
        for (int64_t c = 0; c < DV; ++c) row[c] = src[c * v_d];
      }
      for (int64_t c = DV; c < DVP; ++c) row[c] = 0.0f;
    }
    bool every_key = !MASKED;
    if (MASKED) {  // x * 0 is NaN exactly when x is inf or NaN; the padding is 0
      float probe[16] = {};
      for (int64_t i = 0; i < S * DVP; i += 16) {
        #pragma omp simd
        for (int64_t l = 0; l < 16; ++l) probe[l] += vb[i + l] * 0.0f;
      }
      for (int64_t l = 0; l < 16; ++l) every_key = every_key || probe[l] != probe[l];
    }
    for (int64_t i0 = 0; i0 < T; i0 += RB) {
      const int64_t rows = T - i0 < RB ? T - i0 : RB;
      int64_t keep_lo[RB], keep_hi[RB], lo = S, hi = 0;
      for (int64_t r = 0; r < RB; ++r) {
        keep_lo[r] = r < rows ? row_keep_lo(i0 + r) : 0;
        keep_hi[r] = r < rows ? row_keep_hi(i0 + r) : 0;
        if (keep_hi[r] > keep_lo[r]) {
          lo = keep_lo[r] < lo ? keep_lo[r] : lo;
          hi = keep_hi[r] > hi ? keep_hi[r] : hi;
        }
      }
      int64_t c0 = 0, c1 = SP;  // score columns computed, whole tiles of 16
      if (!every_key) {
        c0 = hi > lo ? lo / 16 * 16 : 0;
        c1 = hi > lo ? (hi + 15) / 16 * 16 : 0;
      }
      // The block's q rows (a block past the last row repeats it; those rows are not stored).
      const float* qr[RB];
      for (int64_t r = 0; r < RB; ++r) qr[r] = qp + (r < rows ? i0 + r : T - 1) * q_t;
#ifdef TC_VEC8
      for (int64_t j = c0; j < c1; j += 16) {
        tc_f8 a0 = tc_splat8(0.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        const float* kc = ktb + j;
        for (int64_t d = 0; d < D; ++d) {
          const tc_f8 x0 = tc_load8(kc + d * SP), x1 = tc_load8(kc + d * SP + 8);
          tc_f8 w = tc_splat8(qr[0][d * q_d]);
          a0 = tc_fma8(w, x0, a0), a1 = tc_fma8(w, x1, a1);
          w = tc_splat8(qr[1][d * q_d]);
          a2 = tc_fma8(w, x0, a2), a3 = tc_fma8(w, x1, a3);
          w = tc_splat8(qr[2][d * q_d]);
          a4 = tc_fma8(w, x0, a4), a5 = tc_fma8(w, x1, a5);
          w = tc_splat8(qr[3][d * q_d]);
          a6 = tc_fma8(w, x0, a6), a7 = tc_fma8(w, x1, a7);
        }
        tc_store8(sc + j, a0), tc_store8(sc + j + 8, a1);
        tc_store8(sc + SP + j, a2), tc_store8(sc + SP + j + 8, a3);
        tc_store8(sc + 2 * SP + j, a4), tc_store8(sc + 2 * SP + j + 8, a5);
        tc_store8(sc + 3 * SP + j, a6), tc_store8(sc + 3 * SP + j + 8, a7);
      }
#else
      for (int64_t r = 0; r < RB; ++r) {
        float* s = sc + r * SP;
        for (int64_t j = c0; j < c1; ++j) s[j] = 0.0f;
        for (int64_t d = 0; d < D; ++d) {
          const float w = qr[r][d * q_d];
          const float* kr = ktb + d * SP;
          #pragma omp simd
          for (int64_t j = c0; j < c1; ++j) s[j] += w * kr[j];
        }
      }
#endif
      float sums[RB];  // 1 / the sum of each row's weights
      for (int64_t r = 0; r < RB; ++r) {
        float* __restrict s = sc + r * SP;
        const int64_t a = keep_lo[r], e = keep_hi[r];
        // Whole tiles of 16 (sc is padded and aligned): no remainder loops, masked lanes blend,
        // and the max and sum stay 16 lanes wide until the row ends.
        float lane_max[16], lane_sum[16];
        for (int64_t jj = 0; jj < 16; ++jj) lane_max[jj] = -std::numeric_limits<float>::infinity(), lane_sum[jj] = 0.0f;
        for (int64_t jt = c0; jt < c1; jt += 16) {
          float* __restrict t = static_cast<float*>(__builtin_assume_aligned(s + jt, 64));
          #pragma omp simd
          for (int64_t jj = 0; jj < 16; ++jj) {
            const int64_t j = jt + jj;
            const float x = SCALE_OP(t[jj]);
            t[jj] = x;
            lane_max[jj] = j >= a && j < e && x > lane_max[jj] ? x : lane_max[jj];
          }
        }
        float m = -std::numeric_limits<float>::infinity();
        #pragma omp simd reduction(max:m)
        for (int64_t jj = 0; jj < 16; ++jj) m = lane_max[jj] > m ? lane_max[jj] : m;
        // A NaN score is skipped by this max but makes its exp, the sum and so the row NaN, as
        // in eager's softmax.
        for (int64_t jt = c0; jt < c1; jt += 16) {
          float* __restrict t = static_cast<float*>(__builtin_assume_aligned(s + jt, 64));
          #pragma omp simd
          for (int64_t jj = 0; jj < 16; ++jj) {
            const int64_t j = jt + jj;
            const float p = j >= a && j < e ? tc_exp(t[jj] - m) : 0.0f;
            t[jj] = p;
            lane_sum[jj] += p;
          }
        }
        float sum = 0.0f;
        #pragma omp simd reduction(+:sum)
        for (int64_t jj = 0; jj < 16; ++jj) sum += lane_sum[jj];
        sums[r] = 1.0f / sum;  // inf for a row with no key: 0 * inf below is eager's NaN
      }
      const int64_t j1 = c1 < S ? c1 : S;
      for (int64_t c = 0; c < DVP; c += 16) {
#ifdef TC_VEC8
        tc_f8 a0 = tc_splat8(0.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        for (int64_t j = c0; j < j1; ++j) {
          const tc_f8 x0 = tc_load8(vb + j * DVP + c), x1 = tc_load8(vb + j * DVP + c + 8);
          tc_f8 w = tc_splat8(sc[j]);
          a0 = tc_fma8(w, x0, a0), a1 = tc_fma8(w, x1, a1);
          w = tc_splat8(sc[SP + j]);
          a2 = tc_fma8(w, x0, a2), a3 = tc_fma8(w, x1, a3);
          w = tc_splat8(sc[2 * SP + j]);
          a4 = tc_fma8(w, x0, a4), a5 = tc_fma8(w, x1, a5);
          w = tc_splat8(sc[3 * SP + j]);
          a6 = tc_fma8(w, x0, a6), a7 = tc_fma8(w, x1, a7);
        }
        tc_store8(tile, a0), tc_store8(tile + 8, a1);
        tc_store8(tile + 16, a2), tc_store8(tile + 24, a3);
        tc_store8(tile + 32, a4), tc_store8(tile + 40, a5);
        tc_store8(tile + 48, a6), tc_store8(tile + 56, a7);
#else
        for (int64_t r = 0; r < RB; ++r) {
          float* t = tile + r * 16;
          for (int64_t cc = 0; cc < 16; ++cc) t[cc] = 0.0f;
          for (int64_t j = c0; j < j1; ++j) {
            const float w = sc[r * SP + j];
            const float* vr = vb + j * DVP + c;
            #pragma omp simd
            for (int64_t cc = 0; cc < 16; ++cc) t[cc] += w * vr[cc];
          }
        }
#endif
        const int64_t width = DV - c < 16 ? DV - c : 16;
        for (int64_t r = 0; r < rows; ++r) {
          float* out = yp + (i0 + r) * DV + c;
          for (int64_t cc = 0; cc < width; ++cc) out[cc] = tile[r * 16 + cc] * sums[r];
        }
      }
    }
  }
)BODY";

}  // namespace

std::string generate_attention_kernel(const WindowKernel& k, const std::string& name) {
  const WindowKernel::AttentionShape& a = k.attention;
  const bool masked = !a.keep_lo.empty();
  std::string s = fmt::format("// attention: q [.., {0}, {2}] kT [.., {2}, {1}] v [.., {1}, {3}], scores {4} {5:#.9g}{6}, softmax\n",
                              a.t, a.s, a.d, a.dv, a.divide ? "/" : "*", a.scale, masked ? ", constant mask" : "");
  s += kVectorHelpers;
  s += "#ifdef _OPENMP\n#include <omp.h>\n#endif\n";
  if (masked) {
    s += fmt::format("static const int32_t {}_keep_lo[{}] = {{{}}};\n", name, a.t, fmt::join(a.keep_lo, ","));
    s += fmt::format("static const int32_t {}_keep_hi[{}] = {{{}}};\n", name, a.t, fmt::join(a.keep_hi, ","));
  }
  s += fmt::format("static __attribute__((noinline)) void {}_heads(const void* const* in_, void* const* out_, const int64_t* st, "
                   "int64_t heads, int64_t bh0, int64_t bh1) {{\n", name);
  s += fmt::format("  constexpr int64_t T = {}, S = {}, D = {}, DV = {}, SP = {}, DVP = {}, RB = 4;\n", a.t, a.s, a.d, a.dv,
                   round16(a.s), round16(a.dv));
  s += fmt::format("  constexpr bool MASKED = {};\n", masked ? "true" : "false");
  s += fmt::format("  const float scale = {:#.9g}f;\n", static_cast<float>(a.scale));
  s += fmt::format("#define SCALE_OP(x) ((x) {} scale)\n", a.divide ? "/" : "*");
  if (masked) {
    s += fmt::format("  auto row_keep_lo = [](int64_t i) -> int64_t {{ return {}_keep_lo[i]; }};\n", name);
    s += fmt::format("  auto row_keep_hi = [](int64_t i) -> int64_t {{ return {}_keep_hi[i]; }};\n", name);
  } else {
    s += "  auto row_keep_lo = [](int64_t) -> int64_t { return 0; };\n";
    s += "  auto row_keep_hi = [](int64_t) -> int64_t { return S; };\n";
  }
  s += kAttentionBody;
  s += "#undef SCALE_OP\n}\n";
  s += fmt::format("extern \"C\" void {}(const void* const* in_, void* const* out_, const int64_t* sz, const int64_t* st) {{\n", name);
  s += "  const int64_t n = sz[0] * sz[1];\n  int64_t chunks = 1;\n";
  s += "#ifdef _OPENMP\n  chunks = std::min<int64_t>(n, omp_get_max_threads());\n#endif\n";
  s += "  #pragma omp parallel for schedule(static) if (chunks > 1)\n";
  s += fmt::format("  for (int64_t c = 0; c < chunks; ++c) {}_heads(in_, out_, st, sz[1], n * c / chunks, n * (c + 1) / chunks);\n}}\n", name);
  return s;
}

}  // namespace tcprof
