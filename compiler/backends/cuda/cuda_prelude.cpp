// The device helpers every generated CUDA unit begins with: the argument block, 16-bit float
// conversions, vector accesses, reduction steps and the warp and block reductions. NVRTC and the
// emulation header (cuda_emulation.cpp) read the same text.
#include "compiler/backends/cuda/codegen_cuda.h"

namespace tcprof {

const char* cuda_prelude() {
  return R"PRELUDE(// tcprof CUDA unit
#ifndef TC_EMULATION
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define INT64_C(c) c##LL
#endif

// Every kernel's arguments, by value: pointers, the index space's sizes, each input's strides
// (elements). Every member is 8 bytes, so host and device agree on the layout without padding.
template <int NI, int NO, int R>
struct tc_params {
  const void* in[NI];
  void* out[NO];
  int64_t sz[R];
  int64_t st[NI * R];
};

// bf16: the high half of a float; rounded to nearest even, NaN kept quiet.
__device__ __forceinline__ float tc_bf16_to_float(uint16_t h) { return __uint_as_float(static_cast<uint32_t>(h) << 16); }
__device__ __forceinline__ uint16_t tc_float_to_bf16(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
__device__ __forceinline__ float tc_round_bf16(float f) { return tc_bf16_to_float(tc_float_to_bf16(f)); }

// f16: the device's conversions; in emulation, the same rounding written out.
#ifndef TC_EMULATION
__device__ __forceinline__ float tc_f16_to_float(uint16_t h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ uint16_t tc_float_to_f16(float f) {
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
#else
inline float tc_f16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24
    const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  const uint32_t bits = exp == 0x1fu ? (sign | 0x7f800000u | (man << 13)) : (sign | ((exp + 112u) << 23) | (man << 13));
  return __uint_as_float(bits);
}
inline uint16_t tc_float_to_f16(float f) {
  uint32_t u = __float_as_uint(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (u >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and up round to infinity
  if (u < 0x38800000u) {                        // below 2^-14: a subnormal in units of 2^-24
    return sign | static_cast<uint16_t>(nearbyintf(__uint_as_float(u) * 16777216.0f));
  }
  u -= 0x38000000u;  // rebias the exponent, then round 23 mantissa bits to 10, ties to even
  u += 0xfffu + ((u >> 13) & 1u);
  return sign | static_cast<uint16_t>(u >> 13);
}
#endif
__device__ __forceinline__ float tc_round_f16(float f) { return tc_f16_to_float(tc_float_to_f16(f)); }

// Loop unrolling where NVRTC compiles (the emulation's compiler takes the loops as they are).
#ifdef TC_EMULATION
#define TC_UNROLL
#define TC_UNROLL4
#else
#define TC_UNROLL _Pragma("unroll")
#define TC_UNROLL4 _Pragma("unroll 4")
#endif

// Four consecutive elements, loaded and stored as one access of up to 16 bytes (two for 8-byte
// types). The emulation copies the bytes, which C++ allows where the device's cast is its idiom.
template <typename T>
struct alignas(sizeof(T) * 4 < 16 ? sizeof(T) * 4 : 16) tc_vec4 {
  T v[4];
};
template <typename T> __device__ __forceinline__ bool tc_aligned4(const T* p) {
  return reinterpret_cast<unsigned long long>(p) % alignof(tc_vec4<T>) == 0;
}
#ifdef TC_EMULATION
// A vector access off its alignment is a fault on the device (misaligned address): the emulation
// stops there too instead of running on where x86 would not mind.
template <typename T> inline void tc_check_aligned4(const T* p) {
  if (tc_aligned4(p)) return;
  std::fprintf(stderr, "tcprof cuda emulation: a vector access at %p is off its %zu-byte alignment (a device would "
               "fault here): please report this with the model\n", static_cast<const void*>(p), alignof(tc_vec4<T>));
  std::abort();
}
#endif
template <typename T> __device__ __forceinline__ tc_vec4<T> tc_load4(const T* p, int64_t v) {
#ifdef TC_EMULATION
  tc_check_aligned4(p + 4 * v);
  tc_vec4<T> r;
  std::memcpy(&r, p + 4 * v, sizeof r);
  return r;
#else
  return reinterpret_cast<const tc_vec4<T>*>(p)[v];
#endif
}
template <typename T> __device__ __forceinline__ void tc_store4(T* p, int64_t v, const tc_vec4<T>& x) {
#ifdef TC_EMULATION
  tc_check_aligned4(p + 4 * v);
  std::memcpy(p + 4 * v, &x, sizeof x);
#else
  reinterpret_cast<tc_vec4<T>*>(p)[v] = x;
#endif
}

template <typename T> __device__ __forceinline__ T tc_max(T a, T b) { return (a > b || a != a) ? a : b; }
template <typename T> __device__ __forceinline__ T tc_min(T a, T b) { return (a < b || a != a) ? a : b; }
// Reduction steps, as the cpp backend's loops take them (a row max skips NaN like its loop does).
template <typename T> __device__ __forceinline__ T tc_add(T acc, T v) { return acc + v; }
template <typename T> __device__ __forceinline__ T tc_greater(T acc, T v) { return v > acc ? v : acc; }
template <typename T> __device__ __forceinline__ T tc_less(T acc, T v) { return v < acc ? v : acc; }

template <typename T> __device__ __forceinline__ T tc_shfl_xor(T v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }
__device__ __forceinline__ bool tc_shfl_xor(bool v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, static_cast<int>(v), lane_mask) != 0; }

// A warp's partial in its 8-byte shared slot. The emulation copies bytes: its compiler may assume
// an int64_t array is never read as a float (strict aliasing), which the device's cast is not.
template <typename T> __device__ __forceinline__ void tc_put_slot(int64_t* slots, unsigned w, T v) {
#ifdef TC_EMULATION
  std::memcpy(slots + w, &v, sizeof v);
#else
  reinterpret_cast<T*>(slots)[w] = v;
#endif
}
template <typename T> __device__ __forceinline__ T tc_get_slot(const int64_t* slots, unsigned w) {
#ifdef TC_EMULATION
  T v;
  std::memcpy(&v, slots + w, sizeof v);
  return v;
#else
  return reinterpret_cast<const T*>(slots)[w];
#endif
}

// The block's reduction of one value per thread, returned to every thread: a butterfly within
// each warp, then every thread combines the warps' partials in warp order (the same order in every
// thread and every run). blockDim.x is a multiple of 32.
template <typename T, typename Op>
__device__ __forceinline__ T tc_block_reduce(T v, int64_t* partials, Op op) {
  for (int m = 16; m > 0; m >>= 1) v = op(v, tc_shfl_xor(v, m));
  __syncthreads();  // the slots' last readers are done
  if ((threadIdx.x & 31) == 0) tc_put_slot(partials, threadIdx.x >> 5, v);
  __syncthreads();
  T r = tc_get_slot<T>(partials, 0);
  for (unsigned w = 1; w < (blockDim.x >> 5); ++w) r = op(r, tc_get_slot<T>(partials, w));
  return r;
}
// A row's reduction: the warp's butterfly alone when a warp holds the row (every lane gets the
// result, as the block's reduction of one warp gives), else the block's.
template <typename T, typename Op>
__device__ __forceinline__ T tc_row_reduce(T v, int64_t* partials, Op op, bool warp_rows) {
  if (!warp_rows) return tc_block_reduce(v, partials, op);
  for (int m = 16; m > 0; m >>= 1) v = op(v, tc_shfl_xor(v, m));
  return v;
}

)PRELUDE";
}

}  // namespace tcprof
