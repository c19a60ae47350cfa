#include "compiler/backends/cuda/codegen_cuda.h"

#include <cmath>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "compiler/backends/cpp/codegen/c_expressions.h"
#include "compiler/backends/cpp/lower/kernel_levels.h"
#include "compiler/backends/cuda/cuda_launch.h"
#include "core/sha256.h"

namespace tcprof {
namespace {

// Bool is stored as bytes, bf16 and f16 as their 16 bits, as LibTorch stores them.
const char* storage_type(ElemType t) { return t == ElemType::Bool ? "uint8_t" : is_16_bit_float(t) ? "uint16_t" : c_type(t); }

// A computed value as its output stores it: bf16 and f16 rounded to nearest even.
std::string stored(ElemType t, const std::string& value) {
  if (t == ElemType::BF16) return "tc_float_to_bf16(" + value + ")";
  if (t == ElemType::F16) return "tc_float_to_f16(" + value + ")";
  return value;
}

std::string float_bits(double v, ElemType t) {
  if (t != ElemType::F64) {
    float f = static_cast<float>(v);
    uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    return fmt::format("__int_as_float(0x{:08x})", bits);
  }
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return fmt::format("__longlong_as_double(0x{:016x}LL)", bits);
}

std::string literal(double v, ElemType t) {
  switch (t) {
    case ElemType::Bool: return v != 0 ? "true" : "false";
    case ElemType::I64: return fmt::format("INT64_C({})", static_cast<int64_t>(v));
    case ElemType::I32: return fmt::format("{}", static_cast<int32_t>(v));
    case ElemType::F32:
    case ElemType::BF16:  // computed in float: the constant as LibTorch's opmath holds it
    case ElemType::F16:
    case ElemType::F64:
      if (!std::isfinite(v)) return float_bits(v, t);
      return t != ElemType::F64 ? fmt::format("{:#.9g}f", static_cast<float>(v)) : fmt::format("{:#.17g}", v);
  }
  return "0";
}

// The identity a reduction starts from.
std::string reduction_init(ExprOp op, ElemType t) {
  if (op == ExprOp::ReduceSum) return literal(0, t);
  const bool max = op == ExprOp::ReduceMax;
  switch (t) {
    case ElemType::F32:
    case ElemType::BF16:
    case ElemType::F16:
    case ElemType::F64: return literal(max ? -INFINITY : INFINITY, t);
    case ElemType::I64: return max ? "(-INT64_C(9223372036854775807) - 1)" : "INT64_C(9223372036854775807)";
    case ElemType::I32: return max ? "(-2147483647 - 1)" : "2147483647";
    case ElemType::Bool: return max ? "false" : "true";
  }
  return "0";
}

class CudaKernelWriter {
 public:
  explicit CudaKernelWriter(const Kernel& k) : k_(k), levels_(kernel_levels(k)) {}

  std::string write(const std::string& name) const {
    const int R = k_.rank;
    const size_t NI = std::max<size_t>(k_.inputs.size(), 1), NO = std::max<size_t>(k_.outputs.size(), 1);
    std::string s = fmt::format("// {}\nextern \"C\" __global__ void __launch_bounds__(1024) {}(const tc_params<{}, {}, {}> p) {{\n",
                                fmt::join(k_.op_names, ", "), name, NI, NO, R);
    for (size_t i = 0; i < k_.inputs.size(); ++i) {
      s += fmt::format("  const {0}* __restrict__ in{1} = static_cast<const {0}*>(p.in[{1}]);\n", storage_type(k_.inputs[i].type), i);
    }
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      s += fmt::format("  {0}* __restrict__ out{1} = static_cast<{0}*>(p.out[{1}]);\n", storage_type(out_type(i)), i);
    }
    s += k_.kind == KernelKind::Row ? row_body(R) : pointwise_body(R);
    s += "}\n";
    return s;
  }

 private:
  ElemType out_type(size_t i) const { return k_.nodes[static_cast<size_t>(k_.outputs[i].expr)].type; }

  // Each input's element offset for the multi-index of `flat` over dims [0, dims), added to the
  // offsets b0, b1, ... (declared by the caller). `index` is the integer type of the arithmetic:
  // 64-bit division is a long software routine on the GPU, 32-bit a few instructions.
  std::string offsets(int R, int dims, const char* flat, const std::string& indent, const char* index = "int64_t") const {
    std::string s = fmt::format("{}{} rem = static_cast<{}>({});\n", indent, index, index, flat);
    for (int d = dims - 1; d >= 0; --d) {
      s += fmt::format("{0}{{ const {1} n = static_cast<{1}>(p.sz[{2}]); const {1} ix = rem % n; rem /= n;", indent, index, d);
      for (size_t i = 0; i < k_.inputs.size(); ++i) {
        s += fmt::format(" b{} += static_cast<int64_t>(ix) * p.st[{}];", i, static_cast<int>(i) * R + d);
      }
      s += " }\n";
    }
    s += indent + "(void)rem;\n";
    return s;
  }
  std::string zero_offsets(const std::string& indent) const {
    std::string s;
    for (size_t i = 0; i < k_.inputs.size(); ++i) s += fmt::format("{}int64_t b{} = 0;\n", indent, i);
    return s;
  }

  // The element `j` of row-scope input pointers (row kernels) or the element at offset b (pointwise).
  std::string load(int input, const char* j) const {
    const KernelInput& in = k_.inputs[static_cast<size_t>(input)];
    std::string e;
    if (j == nullptr) e = fmt::format("in{0}[b{0}]", input);
    else if (in.inner == InnerStride::Broadcast) e = fmt::format("r{}[0]", input);
    else if (in.inner == InnerStride::Strided) e = fmt::format("r{0}[{1} * s{0}]", input, j);
    else e = fmt::format("r{}[{}]", input, j);
    if (in.type == ElemType::BF16) return "tc_bf16_to_float(" + e + ")";
    if (in.type == ElemType::F16) return "tc_f16_to_float(" + e + ")";
    return in.type == ElemType::Bool ? "(" + e + " != 0)" : e;
  }

  std::string node_expr(size_t i, const char* j) const {
    const ExprNode& n = k_.nodes[i];
    const char* T = c_type(n.type);
    const bool fp = is_floating(n.type);
    const bool f32 = n.type == ElemType::F32 || is_16_bit_float(n.type);  // 16-bit floats compute in float
    auto a = [&](size_t idx) { return fmt::format("t{}", n.args[idx]); };
    // f32 and f64 math by name (NVRTC's and libm's float functions carry an f suffix).
    auto fn = [&](const char* base) { return fmt::format("{}{}({})", base, f32 ? "f" : "", a(0)); };
    std::vector<std::string> args;
    for (size_t i = 0; i < n.args.size(); ++i) args.push_back(a(i));
    if (std::string e = c_operator_expr(n.op, args); !e.empty()) return e;
    switch (n.op) {
      case ExprOp::Load: return load(n.input, j);
      case ExprOp::Const: return literal(n.value, n.type);
      case ExprOp::RowLen: return fmt::format("static_cast<{}>(inner)", T);
      case ExprOp::Cast:
        // To bf16 or f16: the value rounds there, as eager's .to() rounds it.
        if (n.type == ElemType::BF16) return fmt::format("tc_round_bf16(static_cast<float>({}))", a(0));
        if (n.type == ElemType::F16) return fmt::format("tc_round_f16(static_cast<float>({}))", a(0));
        return fmt::format("static_cast<{}>({})", T, a(0));
      case ExprOp::Abs: return fp ? fn("fabs") : fmt::format("({0} < 0 ? -{0} : {0})", a(0));
      case ExprOp::Exp: return fn("exp");
      case ExprOp::Log: return fn("log");
      case ExprOp::Sqrt: return fn("sqrt");
      case ExprOp::Rsqrt: return fmt::format("(static_cast<{}>(1) / {})", T, fn("sqrt"));
      case ExprOp::Tanh: return fn("tanh");
      case ExprOp::Erf: return fn("erf");
      // LibTorch's CUDA GELU: 0.5 * (1 + erf(x / sqrt 2)) in the value's type.
      case ExprOp::NormCdf:
        return f32 ? fmt::format("(0.5f * (1.0f + erff({} * 0.707106781186547524f)))", a(0))
                   : fmt::format("(0.5 * (1.0 + erf({} * 0.70710678118654752440)))", a(0));
      // LibTorch's CUDA GELU backward: cdf + x * pdf, each as its formula, in the value's type.
      case ExprOp::GeluGrad:
        return f32 ? fmt::format("(0.5f * (1.0f + erff({0} * 0.707106781186547524f)) + {0} * (expf(-0.5f * {0} * {0}) * "
                                 "0.398942280401432678f))", a(0))
                   : fmt::format("(0.5 * (1.0 + erf({0} * 0.70710678118654752440)) + {0} * (exp(-0.5 * {0} * {0}) * "
                                 "0.398942280401432678))", a(0));
      case ExprOp::Sigmoid: return fmt::format("(static_cast<{0}>(1) / (static_cast<{0}>(1) + exp{1}(-{2})))", T, f32 ? "f" : "", a(0));
      case ExprOp::Sin: return fn("sin");
      case ExprOp::Cos: return fn("cos");
      case ExprOp::Floor: return fn("floor");
      case ExprOp::Ceil: return fn("ceil");
      case ExprOp::Round: return fn("rint");  // half to even, as nearbyint and torch.round
      case ExprOp::Recip: return fmt::format("(static_cast<{}>(1) / {})", T, a(0));
      case ExprOp::Max: return fmt::format("tc_max<{}>({}, {})", T, a(0), a(1));
      case ExprOp::Min: return fmt::format("tc_min<{}>({}, {})", T, a(0), a(1));
      case ExprOp::Pow:
        return f32 ? fmt::format("powf({}, {})", a(0), a(1))
                   : fmt::format("static_cast<{}>(pow(static_cast<double>({}), static_cast<double>({})))", T, a(0), a(1));
      // One rounding: eager's add/sub with alpha on the GPU fuses it too. An operand may be a
      // wider accumulator (a row's double sum), rounded to T as eager's tensor of it is.
      case ExprOp::Fma:
        return fp ? fmt::format("fma{}(static_cast<{}>({}), static_cast<{}>({}), static_cast<{}>({}))", f32 ? "f" : "", T, a(0), T, a(1), T, a(2))
                  : fmt::format("({} * {} + {})", a(0), a(1), a(2));
      case ExprOp::Neg: case ExprOp::Not: case ExprOp::Add: case ExprOp::Sub: case ExprOp::Mul:
      case ExprOp::Div: case ExprOp::Eq: case ExprOp::Ne: case ExprOp::Lt: case ExprOp::Le: case ExprOp::Gt:
      case ExprOp::Ge: case ExprOp::And: case ExprOp::Or: case ExprOp::Where: break;  // c_operator_expr
      case ExprOp::ReduceSum:
      case ExprOp::ReduceMax:
      case ExprOp::ReduceMin: break;  // accumulators, written by the row phases
    }
    return "0";
  }

  void emit(const std::vector<int>& roots, std::vector<bool>& defined, std::string& s, const std::string& indent,
            const char* j, bool stop_at_uniform) const {
    for (int n : nodes_needed(k_, levels_, roots, defined, stop_at_uniform)) {
      s += fmt::format("{}const {} t{} = {};\n", indent, c_type(k_.nodes[static_cast<size_t>(n)].type), n,
                       node_expr(static_cast<size_t>(n), j));
      defined[static_cast<size_t>(n)] = true;
    }
  }

  std::string pointwise_body(int R) const {
    std::string s = "  int64_t total = 1;\n";
    for (int d = 0; d < R; ++d) s += fmt::format("  total *= p.sz[{}];\n", d);
    // Inputs laid out as the index space (row-major, size-1 dimensions aside) are read at e itself;
    // otherwise each element's multi-index, in 32-bit arithmetic where the space fits.
    s += "  bool tc_flat = true;\n  {\n    int64_t expect = 1;\n";
    for (int d = R - 1; d >= 0; --d) {
      s += fmt::format("    if (p.sz[{}] != 1) tc_flat = tc_flat", d);
      for (size_t i = 0; i < k_.inputs.size(); ++i) s += fmt::format(" && p.st[{}] == expect", static_cast<int>(i) * R + d);
      s += fmt::format(";\n    expect *= p.sz[{}];\n", d);
    }
    s += "    (void)expect;\n  }\n  const bool tc_narrow = total <= 0x7fffffff;\n";
    // Each thread takes kPointwiseUnroll elements a grid-stride apart, unrolled, so that their loads
    // are in flight together: one 4-byte load per thread at a time keeps about 1 MB in flight on an
    // H200, a quarter of what its memory needs to run at full speed.
    s += "  const int64_t tc_stride = static_cast<int64_t>(gridDim.x) * blockDim.x;\n";
    s += fmt::format("  for (int64_t tc_e0 = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; tc_e0 < total;\n"
                     "       tc_e0 += {0} * tc_stride) {{\n"
                     "    TC_UNROLL\n"
                     "    for (int tc_u = 0; tc_u < {0}; ++tc_u) {{\n"
                     "      const int64_t e = tc_e0 + tc_u * tc_stride;\n"
                     "      if (e >= total) break;\n",
                     kPointwiseUnroll);
    s += zero_offsets("      ");
    s += "      if (tc_flat) {\n";
    for (size_t i = 0; i < k_.inputs.size(); ++i) s += fmt::format("        b{} = e;\n", i);
    s += "      } else if (tc_narrow) {\n" + offsets(R, R, "e", "        ", "uint32_t") + "      } else {\n" +
         offsets(R, R, "e", "        ") + "      }\n";
    std::vector<bool> defined(k_.nodes.size(), false);
    std::vector<int> roots;
    for (const auto& o : k_.outputs) roots.push_back(o.expr);
    emit(roots, defined, s, "      ", nullptr, false);
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      s += fmt::format("      out{}[e] = {};\n", i, stored(out_type(i), fmt::format("t{}", k_.outputs[i].expr)));
    }
    s += "    }\n  }\n";
    return s;
  }

  std::string row_body(int R) const {
    std::string s = "  __shared__ int64_t tc_partials[32];  // one slot per warp, 8 bytes: any accumulator type\n";
    s += fmt::format("  const int64_t inner = p.sz[{}];\n  int64_t outer = 1;\n", R - 1);
    for (int d = 0; d < R - 1; ++d) s += fmt::format("  outer *= p.sz[{}];\n", d);
    // A warp per row for short rows (launch_shape's rule); else the block. Every warp of a block
    // runs the same number of row steps (a warp past the last row idles through them), so the
    // reductions' shuffles and barriers stay in uniform control flow.
    s += fmt::format("  const bool tc_warp_rows = inner <= {};\n", kWarpRowMax);
    s += "  const int64_t tc_rows = tc_warp_rows ? (blockDim.x >> 5) : 1;\n"
         "  const int64_t tc_lane = tc_warp_rows ? (threadIdx.x & 31) : threadIdx.x;\n"
         "  const int64_t tc_step = tc_warp_rows ? 32 : blockDim.x;\n";
    s += "  for (int64_t o0 = static_cast<int64_t>(blockIdx.x) * tc_rows; o0 < outer; o0 += static_cast<int64_t>(gridDim.x) * tc_rows) {\n"
         "    const int64_t o = o0 + (tc_warp_rows ? (threadIdx.x >> 5) : 0);\n"
         "    const bool tc_active = o < outer;\n";
    s += zero_offsets("    ") + offsets(R, R - 1, "o", "    ");
    for (size_t i = 0; i < k_.inputs.size(); ++i) {
      s += fmt::format("    const {0}* __restrict__ r{1} = in{1} + b{1};\n", storage_type(k_.inputs[i].type), i);
      if (k_.inputs[i].inner == InnerStride::Strided) s += fmt::format("    const int64_t s{} = p.st[{}];\n", i, static_cast<int>(i) * R + R - 1);
    }
    std::vector<bool> reuse = outputs_divided_in_place(k_, levels_);
    // A 16-bit output would be rounded twice (e stored, then e / sum): computed at once instead.
    for (size_t i = 0; i < reuse.size(); ++i) reuse[i] = reuse[i] && !is_16_bit_float(out_type(i));
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      if (!k_.outputs[i].per_row) s += fmt::format("    {}* __restrict__ q{} = out{} + o * inner;\n", storage_type(out_type(i)), i, i);
    }
    std::vector<bool> defined(k_.nodes.size(), false);
    for (int L = 1; L <= levels_.max_level; ++L) {
      std::vector<int> reductions = levels_.reductions_at(L), args;
      for (int r : reductions) args.push_back(k_.nodes[static_cast<size_t>(r)].args[0]);
      emit(uniform_leaves(k_, levels_, args, defined), defined, s, "    ", "0", false);
      for (int r : reductions) {
        const ExprNode& n = k_.nodes[static_cast<size_t>(r)];
        const bool wide = sum_accumulates_in_double(k_, r);  // the accumulation rule (kernel_levels.h)
        s += fmt::format("    {} t{} = {};\n", wide ? "double" : c_type(n.type), r, wide ? "0.0" : reduction_init(n.op, n.type));
      }
      s += "    TC_UNROLL4\n    for (int64_t j = tc_lane; tc_active && j < inner; j += tc_step) {\n";
      std::vector<bool> in_loop = defined;
      emit(args, in_loop, s, "      ", "j", true);
      for (int r : reductions) {
        const ExprNode& n = k_.nodes[static_cast<size_t>(r)];
        s += fmt::format("      t{0} = {1}<decltype(t{0})>(t{0}, t{2});\n", r, combine(n.op), n.args[0]);
      }
      if (L == levels_.max_level) {
        for (size_t i = 0; i < k_.outputs.size(); ++i) {
          if (reuse[i]) s += fmt::format("      q{}[j] = t{};\n", i, k_.nodes[static_cast<size_t>(k_.outputs[i].expr)].args[0]);
        }
      }
      s += "    }\n";
      for (int r : reductions) {
        s += fmt::format("    t{0} = tc_row_reduce(t{0}, tc_partials, {1}<decltype(t{0})>, tc_warp_rows);\n", r,
                         combine(k_.nodes[static_cast<size_t>(r)].op));
        defined[static_cast<size_t>(r)] = true;
      }
    }
    const auto [element_roots, row_roots, reused] = row_output_roots(k_, reuse);
    if (!element_roots.empty() || !reused.empty()) {
      std::vector<int> uniform_roots = element_roots;
      uniform_roots.insert(uniform_roots.end(), reused.begin(), reused.end());
      emit(uniform_leaves(k_, levels_, uniform_roots, defined), defined, s, "    ", "0", false);
      // A softmax's stored e is read back by the thread that wrote it (same j), so no barrier.
      s += "    TC_UNROLL4\n    for (int64_t j = tc_lane; tc_active && j < inner; j += tc_step) {\n";
      std::vector<bool> in_loop = defined;
      emit(element_roots, in_loop, s, "      ", "j", true);
      for (size_t i = 0; i < k_.outputs.size(); ++i) {
        const KernelOutput& o = k_.outputs[i];
        if (o.per_row) continue;
        if (reuse[i]) s += fmt::format("      q{0}[j] = q{0}[j] / t{1};\n", i, k_.nodes[static_cast<size_t>(o.expr)].args[1]);
        else s += fmt::format("      q{}[j] = {};\n", i, stored(out_type(i), fmt::format("t{}", o.expr)));
      }
      s += "    }\n";
    }
    if (!row_roots.empty()) {
      emit(row_roots, defined, s, "    ", "0", false);
      s += "    if (tc_lane == 0 && tc_active) {\n";
      for (size_t i = 0; i < k_.outputs.size(); ++i) {
        if (k_.outputs[i].per_row) s += fmt::format("      out{}[o] = {};\n", i, stored(out_type(i), fmt::format("t{}", k_.outputs[i].expr)));
      }
      s += "    }\n";
    }
    s += "  }\n";
    return s;
  }

  // The reduction's combining function (the prelude's; NaN handling as the cpp backend's loops).
  static const char* combine(ExprOp op) {
    return op == ExprOp::ReduceSum ? "tc_add" : op == ExprOp::ReduceMax ? "tc_greater" : "tc_less";
  }

  const Kernel& k_;
  KernelLevels levels_;
};

}  // namespace

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

template <typename T> __device__ __forceinline__ T tc_max(T a, T b) { return (a > b || a != a) ? a : b; }
template <typename T> __device__ __forceinline__ T tc_min(T a, T b) { return (a < b || a != a) ? a : b; }
// Reduction steps, as the cpp backend's loops take them (a row max skips NaN like its loop does).
template <typename T> __device__ __forceinline__ T tc_add(T acc, T v) { return acc + v; }
template <typename T> __device__ __forceinline__ T tc_greater(T acc, T v) { return v > acc ? v : acc; }
template <typename T> __device__ __forceinline__ T tc_less(T acc, T v) { return v < acc ? v : acc; }

template <typename T> __device__ __forceinline__ T tc_shfl_xor(T v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }
__device__ __forceinline__ bool tc_shfl_xor(bool v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, static_cast<int>(v), lane_mask) != 0; }

// The block's reduction of one value per thread, returned to every thread: a butterfly within
// each warp, then every thread combines the warps' partials in warp order (the same order in every
// thread and every run). blockDim.x is a multiple of 32.
template <typename T, typename Op>
__device__ __forceinline__ T tc_block_reduce(T v, int64_t* partials, Op op) {
  for (int m = 16; m > 0; m >>= 1) v = op(v, tc_shfl_xor(v, m));
  T* slots = reinterpret_cast<T*>(partials);
  __syncthreads();  // the slots' last readers are done
  if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = v;
  __syncthreads();
  T r = slots[0];
  for (unsigned w = 1; w < (blockDim.x >> 5); ++w) r = op(r, slots[w]);
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

std::string generate_cuda_kernel(const Kernel& kernel, const std::string& name) { return CudaKernelWriter(kernel).write(name); }

CudaUnit generate_cuda_unit(const LoopProgram& program) {
  CudaUnit unit;
  unit.source = cuda_prelude();
  std::map<std::string, std::string> by_body;  // body with a placeholder name -> symbol
  for (const auto& k : program.kernels) {
    std::string body = generate_cuda_kernel(k, "@NAME@");
    auto it = by_body.find(body);
    std::string symbol;
    if (it != by_body.end()) {
      symbol = it->second;
    } else {
      symbol = "tcu_" + sha256_hex(body).substr(0, 16);
      std::string text = body;
      for (size_t pos = text.find("@NAME@"); pos != std::string::npos; pos = text.find("@NAME@", pos)) text.replace(pos, 6, symbol);
      unit.source += text + "\n";
      by_body.emplace(body, symbol);
      ++unit.unique_kernels;
    }
    CudaKernelSymbol sym;
    sym.symbol = symbol;
    sym.inputs = static_cast<int>(k.inputs.size());
    sym.outputs = static_cast<int>(k.outputs.size());
    sym.rank = k.rank;
    sym.row = k.kind == KernelKind::Row;
    unit.kernels.push_back(sym);
  }
  return unit;
}

}  // namespace tcprof
