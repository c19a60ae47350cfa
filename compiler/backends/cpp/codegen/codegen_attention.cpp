// The attention kernel (schedule/plan_attention.h), generated per shape: T, S, D, Dv, the scale
// and the mask's kept key range per query row are constants. One (batch, head) at a time:
//   1. kT and v are packed into aligned, zero-padded buffers (they are strided views of the QKV
//      projection in a GPT), and v is probed for inf/NaN;
//   2. per block of query rows (8 under AVX-512, else 4), the scores of the keys any of its rows
//      keeps are computed in a register-tiled loop (the block's rows x 2 vectors of keys, FMA over
//      the head dimension) into a small buffer;
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

// The vectors of the two register-tiled loops: 16 floats under AVX-512 (8 query rows of a block,
// tiles of 32 keys or value columns: 16 accumulators of the 32 registers), else 8 floats under AVX2
// (4 rows, tiles of 16: 8 accumulators of 16 registers), else portable loops (4 rows, tiles of 16).
// With GCC, its builtins: <immintrin.h> would add a third of a second to every unit's compile.
// TC_ATT_W is the vector's width, TC_ATT_RB the rows of a block.
const char* kVectorHelpers = R"HELPERS(#ifndef TC_ATTENTION_HELPERS
#define TC_ATTENTION_HELPERS
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#define TC_ATT_W 16
#define TC_ATT_RB 8
typedef float tc_fv __attribute__((vector_size(64), __may_alias__));
static inline tc_fv tc_load(const float* p) { return *reinterpret_cast<const tc_fv*>(p); }
static inline void tc_store(float* p, tc_fv v) { *reinterpret_cast<tc_fv*>(p) = v; }
static inline tc_fv tc_splat(float x) { return tc_fv{x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }
static inline tc_fv tc_fma(tc_fv a, tc_fv b, tc_fv c) { return __builtin_ia32_vfmaddps512_mask(a, b, c, -1, 4); }
#elif defined(__AVX512F__)
#define TC_ATT_W 16
#define TC_ATT_RB 8
#include <immintrin.h>
typedef __m512 tc_fv;
static inline tc_fv tc_load(const float* p) { return _mm512_load_ps(p); }
static inline void tc_store(float* p, tc_fv v) { _mm512_store_ps(p, v); }
static inline tc_fv tc_splat(float x) { return _mm512_set1_ps(x); }
static inline tc_fv tc_fma(tc_fv a, tc_fv b, tc_fv c) { return _mm512_fmadd_ps(a, b, c); }
#elif defined(__AVX2__) && defined(__FMA__) && defined(__GNUC__) && !defined(__clang__)
#define TC_ATT_W 8
#define TC_ATT_RB 4
typedef float tc_fv __attribute__((vector_size(32), __may_alias__));
static inline tc_fv tc_load(const float* p) { return *reinterpret_cast<const tc_fv*>(p); }
static inline void tc_store(float* p, tc_fv v) { *reinterpret_cast<tc_fv*>(p) = v; }
static inline tc_fv tc_splat(float x) { return tc_fv{x, x, x, x, x, x, x, x}; }  // one vbroadcastss (tc_fv{} + x adds first)
static inline tc_fv tc_fma(tc_fv a, tc_fv b, tc_fv c) { return __builtin_ia32_vfmaddps256(a, b, c); }
#elif defined(__AVX2__) && defined(__FMA__)
#define TC_ATT_W 8
#define TC_ATT_RB 4
#include <immintrin.h>
typedef __m256 tc_fv;
static inline tc_fv tc_load(const float* p) { return _mm256_load_ps(p); }
static inline void tc_store(float* p, tc_fv v) { _mm256_store_ps(p, v); }
static inline tc_fv tc_splat(float x) { return _mm256_set1_ps(x); }
static inline tc_fv tc_fma(tc_fv a, tc_fv b, tc_fv c) { return _mm256_fmadd_ps(a, b, c); }
#else
#define TC_ATT_RB 4
#endif
#endif
)HELPERS";

// The per-(batch, head) loop; constants come before it in the same function.
const char* kAttentionBody = R"BODY(
  const float* __restrict q0 = static_cast<const float*>(in_[0]);
  const float* __restrict k0 = static_cast<const float*>(in_[1]);
  const float* __restrict v0 = static_cast<const float*>(in_[2]);
  float* __restrict y0 = static_cast<float*>(out_[0]);
  constexpr int64_t kFloats = D * SP + S * DVP + RB * SP + RB * TILE;
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
  float* __restrict tile = sc + RB * SP;   // one output tile, [RB][TILE]
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
      int64_t c0 = 0, c1 = SP;  // score columns computed, whole tiles
      if (!every_key) {
        c0 = hi > lo ? lo / TILE * TILE : 0;
        c1 = hi > lo ? (hi + TILE - 1) / TILE * TILE : 0;
      }
      // The block's q rows (a block past the last row repeats it; those rows are not stored).
      const float* qr[RB];
      for (int64_t r = 0; r < RB; ++r) qr[r] = qp + (r < rows ? i0 + r : T - 1) * q_t;
#ifdef TC_ATT_W
      for (int64_t j = c0; j < c1; j += TILE) {
        tc_fv acc[RB][2];
        for (int64_t r = 0; r < RB; ++r) acc[r][0] = acc[r][1] = tc_splat(0.0f);
        const float* kc = ktb + j;
        for (int64_t d = 0; d < D; ++d) {
          const tc_fv x0 = tc_load(kc + d * SP), x1 = tc_load(kc + d * SP + TC_ATT_W);
          for (int64_t r = 0; r < RB; ++r) {
            const tc_fv w = tc_splat(qr[r][d * q_d]);
            acc[r][0] = tc_fma(w, x0, acc[r][0]), acc[r][1] = tc_fma(w, x1, acc[r][1]);
          }
        }
        for (int64_t r = 0; r < RB; ++r) tc_store(sc + r * SP + j, acc[r][0]), tc_store(sc + r * SP + j + TC_ATT_W, acc[r][1]);
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
            // x <= 0 or NaN for a kept key. Below -87 exp(x) is under 1.7e-38 (0 or a denormal)
            // and taken as 0: tc_exp_neg is exp only above it. NaN stays NaN.
            const float x = t[jj] - m;
            const float p = j >= a && j < e && !(x < -87.0f) ? tc_exp_neg(x) : 0.0f;
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
      for (int64_t c = 0; c < DVP; c += TILE) {
#ifdef TC_ATT_W
        tc_fv acc[RB][2];
        for (int64_t r = 0; r < RB; ++r) acc[r][0] = acc[r][1] = tc_splat(0.0f);
        for (int64_t j = c0; j < j1; ++j) {
          const tc_fv x0 = tc_load(vb + j * DVP + c), x1 = tc_load(vb + j * DVP + c + TC_ATT_W);
          for (int64_t r = 0; r < RB; ++r) {
            const tc_fv w = tc_splat(sc[r * SP + j]);
            acc[r][0] = tc_fma(w, x0, acc[r][0]), acc[r][1] = tc_fma(w, x1, acc[r][1]);
          }
        }
        for (int64_t r = 0; r < RB; ++r) tc_store(tile + r * TILE, acc[r][0]), tc_store(tile + r * TILE + TC_ATT_W, acc[r][1]);
#else
        for (int64_t r = 0; r < RB; ++r) {
          float* t = tile + r * TILE;
          for (int64_t cc = 0; cc < TILE; ++cc) t[cc] = 0.0f;
          for (int64_t j = c0; j < j1; ++j) {
            const float w = sc[r * SP + j];
            const float* vr = vb + j * DVP + c;
            #pragma omp simd
            for (int64_t cc = 0; cc < TILE; ++cc) t[cc] += w * vr[cc];
          }
        }
#endif
        const int64_t width = DV - c < TILE ? DV - c : TILE;
        for (int64_t r = 0; r < rows; ++r) {
          float* out = yp + (i0 + r) * DV + c;
          for (int64_t cc = 0; cc < width; ++cc) out[cc] = tile[r * TILE + cc] * sums[r];
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
  // TILE: the keys (and value columns) of one register tile, two vectors; SP and DVP pad S and Dv to
  // whole tiles.
  s += fmt::format("  constexpr int64_t T = {}, S = {}, D = {}, DV = {}, RB = TC_ATT_RB;\n", a.t, a.s, a.d, a.dv);
  s += "#ifdef TC_ATT_W\n  constexpr int64_t TILE = 2 * TC_ATT_W;\n#else\n  constexpr int64_t TILE = 16;\n#endif\n";
  s += "  constexpr int64_t SP = (S + TILE - 1) / TILE * TILE, DVP = (DV + TILE - 1) / TILE * TILE;\n";
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
