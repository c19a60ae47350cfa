#include "compiler/backends/cuda/codegen_cuda.h"

#include <cmath>
#include <algorithm>
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
    case ElemType::F64: {
      // As the kernel holds it: 1e39 is finite as a double and inf as a float ("inff" would not compile).
      const double held = t != ElemType::F64 ? static_cast<double>(static_cast<float>(v)) : v;
      if (!std::isfinite(held)) return float_bits(held, t);
      return t != ElemType::F64 ? fmt::format("{:#.9g}f", static_cast<float>(v)) : fmt::format("{:#.17g}", v);
    }
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

// A column kernel's sums, each once: the nodes its per-column outputs are (the kernel writes them,
// the launch sizes its scratch by their count).
std::vector<int> column_sum_nodes(const Kernel& k) {
  std::vector<int> sums;
  for (const auto& o : k.outputs) {
    if (o.per_row && std::find(sums.begin(), sums.end(), o.expr) == sums.end()) sums.push_back(o.expr);
  }
  return sums;
}

// The Load position of a pointwise kernel's vector path (CudaKernelWriter::load), told apart by address.
constexpr char kVectorElement[] = "tc_k";
// Registers a lane may give to a row's cached values (kRowCacheSlots per f32 value, twice that
// per f64): a row kernel may be launched with 1,024 threads, which leaves it 64 a thread.
constexpr int64_t kRowCacheRegisters = 32;

class CudaKernelWriter {
 public:
  CudaKernelWriter(const Kernel& k, const CudaFeatures& features) : k_(k), levels_(kernel_levels(k)), features_(features) {
    if (k_.kind == KernelKind::Row && features_.row_registers) choose_cached_values();
  }

  std::string write(const std::string& name) const {
    const int R = k_.rank;
    std::string s = signature(name) + pointer_declarations(true);
    s += k_.kind == KernelKind::Row ? row_body(R) : k_.kind == KernelKind::Column ? column_body(R) : pointwise_body(R);
    s += "}\n";
    return s;
  }

  // A column kernel's second kernel: where its rows were split across blocks, the splits' partial
  // sums (scratch[split][sum][column]) added in split order, one thread a column. Launched in the
  // first kernel's shape, from which it knows the splits; the first tile's blocks do the work.
  std::string write_finish(const std::string& name) const {
    const int R = k_.rank;
    std::string s = signature(name) + pointer_declarations(false);
    s += column_sizes(R);
    s += "  if (tc_splits <= 1 || blockIdx.x >= tc_tiles || threadIdx.x >= 32) return;\n"
         "  const int64_t j = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;\n"
         "  if (j >= inner) return;\n";
    const std::vector<int> sums = column_sums();
    for (size_t a = 0; a < sums.size(); ++a) {
      s += fmt::format("  {{\n    double tc_s = tc_scratch[{0} * inner + j];\n"
                       "    TC_UNROLL4  // the loads overlap; the adds keep split order\n"
                       "    for (int64_t tc_p = 1; tc_p < tc_splits; ++tc_p) tc_s += tc_scratch[(tc_p * {1} + {0}) * inner + j];\n",
                       a, sums.size());
      s += column_sum_stores(sums[a], "    ");
      s += "  }\n";
    }
    s += "}\n";
    return s;
  }

 private:
  std::vector<int> column_sums() const { return column_sum_nodes(k_); }

  ElemType out_type(size_t i) const { return k_.nodes[static_cast<size_t>(k_.outputs[i].expr)].type; }

  // A column kernel's parameters end with its scratch pointer (codegen_cuda.h).
  std::string signature(const std::string& name) const {
    const size_t NI = std::max<size_t>(k_.inputs.size(), 1);
    const size_t NO = k_.kind == KernelKind::Column ? k_.outputs.size() + 1 : std::max<size_t>(k_.outputs.size(), 1);
    return fmt::format("// {}\nextern \"C\" __global__ void __launch_bounds__(1024) {}(const tc_params<{}, {}, {}> p) {{\n",
                       fmt::join(k_.op_names, ", "), name, NI, NO, k_.rank);
  }
  std::string pointer_declarations(bool with_inputs) const {
    std::string s;
    for (size_t i = 0; with_inputs && i < k_.inputs.size(); ++i) {
      s += fmt::format("  const {0}* __restrict__ in{1} = static_cast<const {0}*>(p.in[{1}]);\n", storage_type(k_.inputs[i].type), i);
    }
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      s += fmt::format("  {0}* __restrict__ out{1} = static_cast<{0}*>(p.out[{1}]);\n", storage_type(out_type(i)), i);
    }
    if (k_.kind == KernelKind::Column) s += fmt::format("  double* __restrict__ tc_scratch = static_cast<double*>(p.out[{}]);\n", k_.outputs.size());
    return s;
  }

  // A column kernel's sizes: `inner` columns (the kept trailing dims), `outer` rows, the tiles of 32
  // columns and the splits of the rows across blocks (cuda_launch.h's column_splits, from the grid).
  static std::string column_sizes(int R) {
    std::string s = fmt::format("  const int64_t inner = p.sz[{}];\n  int64_t outer = 1;\n", R - 1);
    for (int d = 0; d < R - 1; ++d) s += fmt::format("  outer *= p.sz[{}];\n", d);
    s += "  (void)outer;\n  const int64_t tc_tiles = (inner + 31) / 32;\n"
         "  const int64_t tc_splits = tc_tiles > 0 && gridDim.x > tc_tiles ? gridDim.x / tc_tiles : 1;\n";
    return s;
  }

  // Every output that is column sum `node`, stored from the double tc_s.
  std::string column_sum_stores(int node, const std::string& indent) const {
    std::string s;
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      if (!k_.outputs[i].per_row || k_.outputs[i].expr != node) continue;
      s += fmt::format("{}out{}[j] = {};\n", indent, i, stored(out_type(i), fmt::format("static_cast<{}>(tc_s)", c_type(out_type(i)))));
    }
    return s;
  }

  // Column kernels: a block takes 32 columns (a lane each) and its warps take the rows of its split
  // in turn, each lane summing its column in double (the accumulation rule of f32 sums, as the cpp
  // backend's column loops sum) and writing the element outputs on the way; the warps' sums then
  // meet in shared memory, added in warp order. A split's sums go to the scratch for the finish
  // kernel; unsplit, they are the outputs.
  std::string column_body(int R) const {
    const std::vector<int> sums = column_sums();
    std::string s = column_sizes(R);
    s += "  __shared__ double tc_cols[32 * 32];  // each warp's 32 column sums, a row each\n"
         "  if (tc_tiles == 0) return;\n"
         "  const int64_t tc_split = tc_splits > 1 ? blockIdx.x / tc_tiles : 0;\n"
         "  if (tc_split >= tc_splits) return;\n"
         "  const int64_t tc_lane = threadIdx.x & 31, tc_group = threadIdx.x >> 5, tc_groups = blockDim.x >> 5;\n"
         "  const int64_t tc_row_step = tc_splits * tc_groups;\n"
         "  const bool tc_narrow = outer <= 0x7fffffff;\n"
         "  for (int64_t tc_tile = tc_splits > 1 ? blockIdx.x % tc_tiles : blockIdx.x; tc_tile < tc_tiles;\n"
         "       tc_tile += tc_splits > 1 ? tc_tiles : gridDim.x) {\n"
         "    const int64_t j = tc_tile * 32 + tc_lane;\n"
         "    const bool tc_active = j < inner;\n";
    for (size_t a = 0; a < sums.size(); ++a) s += fmt::format("    double a{} = 0.0;\n", a);
    s += "    TC_UNROLL4\n"
         "    for (int64_t o = tc_split * tc_groups + tc_group; tc_active && o < outer; o += tc_row_step) {\n";
    s += zero_offsets("      ");
    s += "      if (tc_narrow) {\n" + offsets(R, R - 1, "o", "        ", "uint32_t") + "      } else {\n" +
         offsets(R, R - 1, "o", "        ") + "      }\n";
    for (size_t i = 0; i < k_.inputs.size(); ++i) {
      s += fmt::format("      const {0}* __restrict__ r{1} = in{1} + b{1};\n", storage_type(k_.inputs[i].type), i);
      if (k_.inputs[i].inner == InnerStride::Strided) s += fmt::format("      const int64_t s{} = p.st[{}];\n", i, static_cast<int>(i) * R + R - 1);
    }
    std::vector<int> roots;
    for (const auto& o : k_.outputs) {
      if (!o.per_row) roots.push_back(o.expr);
    }
    for (int r : sums) roots.push_back(k_.nodes[static_cast<size_t>(r)].args[0]);
    std::vector<bool> defined(k_.nodes.size(), false);
    emit(roots, defined, s, "      ", "j", false);
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      if (!k_.outputs[i].per_row) s += fmt::format("      out{}[o * inner + j] = {};\n", i, stored(out_type(i), fmt::format("t{}", k_.outputs[i].expr)));
    }
    for (size_t a = 0; a < sums.size(); ++a) {
      s += fmt::format("      a{} += static_cast<double>(t{});\n", a, k_.nodes[static_cast<size_t>(sums[a])].args[0]);
    }
    s += "    }\n";
    for (size_t a = 0; a < sums.size(); ++a) {
      s += fmt::format("    __syncthreads();  // the last sum's readers are done\n"
                       "    tc_cols[tc_group * 32 + tc_lane] = a{};\n"
                       "    __syncthreads();\n"
                       "    if (tc_group == 0 && tc_active) {{\n"
                       "      double tc_s = tc_cols[tc_lane];\n"
                       "      for (int64_t tc_g = 1; tc_g < tc_groups; ++tc_g) tc_s += tc_cols[tc_g * 32 + tc_lane];\n"
                       "      if (tc_splits > 1) {{\n"
                       "        tc_scratch[(tc_split * {} + {}) * inner + j] = tc_s;\n"
                       "      }} else {{\n",
                       a, sums.size(), a);
      s += column_sum_stores(sums[a], "        ");
      s += "      }\n    }\n";
    }
    s += "  }\n";
    return s;
  }

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

  // Where a Load reads: in a pointwise kernel the element at offset b (j null) or, on the vector
  // path, element tc_k of the input's 4-vector x (j is kVectorElement); in a row kernel element j of
  // the row's input pointers.
  std::string load(int input, const char* j) const {
    const KernelInput& in = k_.inputs[static_cast<size_t>(input)];
    std::string e;
    if (j == nullptr) e = fmt::format("in{0}[b{0}]", input);
    else if (j == kVectorElement) e = fmt::format("x{}.v[tc_k]", input);
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
    s += "  const int64_t tc_stride = static_cast<int64_t>(gridDim.x) * blockDim.x;\n";
    s += features_.vectors ? vector_path() : "  const int64_t tc_first = 0;\n";
    // Each thread takes kPointwiseUnroll elements a grid-stride apart, unrolled, so that their loads
    // are in flight together: one 4-byte load per thread at a time keeps about 1 MB in flight on an
    // H200, a quarter of what its memory needs to run at full speed.
    s += fmt::format("  for (int64_t tc_e0 = tc_first + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; tc_e0 < total;\n"
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
    s += pointwise_element("      ", nullptr, "out", "[e]");
    s += "    }\n  }\n";
    return s;
  }

  // Every output's value at one element (its loads at position j, as load() reads it), stored to
  // <prefix><output><suffix>: out0[e] in the element loop, y0.v[tc_k] on the vector path.
  std::string pointwise_element(const std::string& indent, const char* j, const char* prefix, const char* suffix) const {
    std::string s;
    std::vector<bool> defined(k_.nodes.size(), false);
    std::vector<int> roots;
    for (const auto& o : k_.outputs) roots.push_back(o.expr);
    emit(roots, defined, s, indent, j, false);
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      s += fmt::format("{}{}{}{} = {};\n", indent, prefix, i, suffix, stored(out_type(i), fmt::format("t{}", k_.outputs[i].expr)));
    }
    return s;
  }

  // Operands laid out as the index space and aligned for it are read and written as 4-element
  // vectors (a float's 16 bytes in one instruction, not four), each thread a vector a grid-stride
  // apart; the last total % 4 elements, and every other layout, take the element loop after it
  // from tc_first.
  std::string vector_path() const {
    std::string s = "  bool tc_vec = tc_flat;\n";
    for (size_t i = 0; i < k_.inputs.size(); ++i) s += fmt::format("  tc_vec = tc_vec && tc_aligned4(in{});\n", i);
    for (size_t i = 0; i < k_.outputs.size(); ++i) s += fmt::format("  tc_vec = tc_vec && tc_aligned4(out{});\n", i);
    s += "  int64_t tc_first = 0;\n  if (tc_vec) {\n    const int64_t tc_vectors = total / 4;\n"
         "    for (int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < tc_vectors; v += tc_stride) {\n";
    for (size_t i = 0; i < k_.inputs.size(); ++i) {
      s += fmt::format("      const tc_vec4<{}> x{} = tc_load4(in{}, v);\n", storage_type(k_.inputs[i].type), i, i);
    }
    for (size_t i = 0; i < k_.outputs.size(); ++i) s += fmt::format("      tc_vec4<{}> y{};\n", storage_type(out_type(i)), i);
    s += "      TC_UNROLL\n      for (int tc_k = 0; tc_k < 4; ++tc_k) {\n";
    s += pointwise_element("        ", kVectorElement, "y", ".v[tc_k]");
    s += "      }\n";
    for (size_t i = 0; i < k_.outputs.size(); ++i) s += fmt::format("      tc_store4(out{}, v, y{});\n", i, i);
    s += "    }\n    tc_first = tc_vectors * 4;\n  }\n";
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
    const std::vector<bool> reuse = divided_in_place();
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      if (!k_.outputs[i].per_row) s += fmt::format("    {}* __restrict__ q{} = out{} + o * inner;\n", storage_type(out_type(i)), i, i);
    }
    if (cached_.empty()) {
      s += row_phases(reuse, false);
    } else {
      // A row of at most kRowCacheSlots elements a thread (a warp's or the block's): what several
      // loops compute from the inputs is computed once into registers, not in each loop. Each
      // thread takes the elements the strided loop gives it, in its order, so the sums do not
      // change. One copy for both, the stride a runtime value. cuobjdump on the GPT's sm_90 unit:
      // its three cached row kernels take 59, 64 and 64 registers with 0, 8 and 8 bytes of stack
      // (warp rows alone, the literal stride: 56, 64, 64 and 0, 8, 16 bytes; NVRTC 1.0 s against
      // 0.85 s); a second copy for warps with the literal stride took 64, 64 and 40 bytes, 1.6 s.
      s += fmt::format("    if (inner <= tc_step * {}) {{\n", kRowCacheSlots);
      s += indented(row_phases(reuse, true));
      s += "    } else {\n" + indented(row_phases(reuse, false)) + "    }\n";
    }
    s += "  }\n";
    return s;
  }

  // Softmax-shaped outputs stored while summing and divided in place afterwards. A 16-bit output
  // would be rounded twice (e stored, then e / sum): computed at once instead.
  std::vector<bool> divided_in_place() const {
    std::vector<bool> reuse = outputs_divided_in_place(k_, levels_);
    for (size_t i = 0; i < reuse.size(); ++i) reuse[i] = reuse[i] && !is_16_bit_float(out_type(i));
    return reuse;
  }

  // The values a row's element loops compute before any reduction and two or more loops use (a
  // layer norm's x + residual in its mean, variance and output loops; not its weight, read once):
  // the tops of those subtrees, in node order while kRowCacheRegisters has room.
  void choose_cached_values() {
    const std::vector<bool> none(k_.nodes.size(), false);
    std::vector<std::vector<int>> loops;
    for (int L = 1; L <= levels_.max_level; ++L) {
      std::vector<int> args;
      for (int r : levels_.reductions_at(L)) args.push_back(k_.nodes[static_cast<size_t>(r)].args[0]);
      loops.push_back(args);
    }
    loops.push_back(row_output_roots(k_, divided_in_place()).element);
    std::vector<int> loops_using(k_.nodes.size(), 0);
    std::vector<bool> root(k_.nodes.size(), false);
    for (const auto& roots : loops) {
      for (int r : roots) root[static_cast<size_t>(r)] = true;
      for (int n : nodes_needed(k_, levels_, roots, none, true)) ++loops_using[static_cast<size_t>(n)];
    }
    auto candidate = [&](size_t n) { return loops_using[n] >= 2 && !levels_.uniform[n] && levels_.level[n] == 0; };
    // The tops: candidates a loop's roots are, or a node that is not a candidate reads (what only
    // candidates read is inside a cached subtree and never computed in the loops).
    std::vector<bool> top(k_.nodes.size(), false);
    for (size_t n = 0; n < k_.nodes.size(); ++n) top[n] = candidate(n) && root[n];
    for (size_t m = 0; m < k_.nodes.size(); ++m) {
      if (loops_using[m] == 0 || candidate(m)) continue;
      for (int a : k_.nodes[m].args) {
        if (candidate(static_cast<size_t>(a))) top[static_cast<size_t>(a)] = true;
      }
    }
    int64_t registers = 0;
    for (size_t n = 0; n < k_.nodes.size(); ++n) {
      if (!top[n]) continue;
      const int64_t cost = kRowCacheSlots * (k_.nodes[n].type == ElemType::F64 || k_.nodes[n].type == ElemType::I64 ? 2 : 1);
      if (registers + cost > kRowCacheRegisters) continue;
      registers += cost;
      cached_.push_back(static_cast<int>(n));
    }
  }

  // A cached row's values for this lane, computed once (row_phases' prologue).
  std::string cache_prologue(std::vector<bool>& defined) const {
    std::string s;
    emit(uniform_leaves(k_, levels_, cached_, defined), defined, s, "    ", "0", false);
    for (int n : cached_) s += fmt::format("    {} c{}[{}];\n", c_type(k_.nodes[static_cast<size_t>(n)].type), n, kRowCacheSlots);
    s += row_loop(true);
    std::vector<bool> in_loop = defined;
    emit(cached_, in_loop, s, "      ", "j", true);
    for (int n : cached_) s += fmt::format("      c{0}[tc_k] = t{0};\n", n);
    s += "    }\n";
    return s;
  }

  // Inside a cached loop: the lane's cached values, defined for what the loop computes from them.
  std::string cached_reads(std::vector<bool>& in_loop) const {
    std::string s;
    for (int n : cached_) {
      s += fmt::format("      const {} t{} = c{}[tc_k];\n", c_type(k_.nodes[static_cast<size_t>(n)].type), n, n);
      in_loop[static_cast<size_t>(n)] = true;
    }
    return s;
  }

  // A loop over the thread's elements of the row: its kRowCacheSlots slots when cached (element
  // tc_lane + tc_step * k in slot k, as the strided loop takes them), else strided to the row's end.
  static std::string row_loop(bool cached) {
    return cached ? fmt::format("    TC_UNROLL\n    for (int tc_k = 0; tc_k < {}; ++tc_k) {{\n"
                                "      const int64_t j = tc_lane + tc_step * tc_k;\n"
                                "      if (!tc_active || j >= inner) break;\n", kRowCacheSlots)
                  : "    TC_UNROLL4\n    for (int64_t j = tc_lane; tc_active && j < inner; j += tc_step) {\n";
  }

  // A row's reduction phases and its output loops. `cached`: the element loops run over the
  // thread's kRowCacheSlots register slots, reading the cached values from them.
  std::string row_phases(const std::vector<bool>& reuse, bool cached) const {
    const std::string loop = row_loop(cached);
    std::string s;
    std::vector<bool> defined(k_.nodes.size(), false);
    if (cached) s += cache_prologue(defined);
    for (int L = 1; L <= levels_.max_level; ++L) {
      std::vector<int> reductions = levels_.reductions_at(L), args;
      for (int r : reductions) args.push_back(k_.nodes[static_cast<size_t>(r)].args[0]);
      emit(uniform_leaves(k_, levels_, args, defined), defined, s, "    ", "0", false);
      for (int r : reductions) {
        const ExprNode& n = k_.nodes[static_cast<size_t>(r)];
        const bool wide = sum_accumulates_in_double(k_, r);  // the accumulation rule (kernel_levels.h)
        s += fmt::format("    {} t{} = {};\n", wide ? "double" : c_type(n.type), r, wide ? "0.0" : reduction_init(n.op, n.type));
      }
      s += loop;
      std::vector<bool> in_loop = defined;
      if (cached) s += cached_reads(in_loop);
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
      s += loop;
      std::vector<bool> in_loop = defined;
      if (cached) s += cached_reads(in_loop);
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
    return s;
  }

  static std::string indented(const std::string& block) {
    std::string s;
    size_t at = 0;
    while (at < block.size()) {
      size_t end = block.find('\n', at);
      if (end == std::string::npos) end = block.size() - 1;
      s += "  " + block.substr(at, end + 1 - at);
      at = end + 1;
    }
    return s;
  }

  // The reduction's combining function (the prelude's; NaN handling as the cpp backend's loops).
  static const char* combine(ExprOp op) {
    return op == ExprOp::ReduceSum ? "tc_add" : op == ExprOp::ReduceMax ? "tc_greater" : "tc_less";
  }

  const Kernel& k_;
  KernelLevels levels_;
  std::vector<int> cached_;  // nodes held in registers on a warp's short row (choose_cached_values)
  CudaFeatures features_;
};

}  // namespace

std::string generate_cuda_kernel(const Kernel& kernel, const std::string& name, const CudaFeatures& features) {
  CudaKernelWriter writer(kernel, features);
  std::string s = writer.write(name);
  if (kernel.kind == KernelKind::Column) s += writer.write_finish(name + "_finish");
  return s;
}

CudaUnit generate_cuda_unit(const LoopProgram& program, const CudaFeatures& features) {
  CudaUnit unit;
  unit.source = cuda_prelude();
  std::map<std::string, std::string> by_body;  // body with a placeholder name -> symbol
  for (const auto& k : program.kernels) {
    std::string body = generate_cuda_kernel(k, "@NAME@", features);
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
    if (k.kind == KernelKind::Column) {
      sym.column = true;
      sym.outputs += 1;  // the scratch
      sym.finish_symbol = symbol + "_finish";
      sym.column_sums = static_cast<int>(column_sum_nodes(k).size());
    }
    unit.kernels.push_back(sym);
  }
  return unit;
}

}  // namespace tcprof
