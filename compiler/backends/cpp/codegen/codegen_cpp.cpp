#include "compiler/backends/cpp/codegen/codegen_cpp.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "compiler/backends/cpp/codegen/c_expressions.h"
#include "compiler/backends/cpp/lower/kernel_levels.h"
#include "core/sha256.h"

namespace tcprof {
namespace {

// How elements are stored: bool as bytes, so that masks load as vectors (GCC does not vectorise
// loads of `bool`, which it must treat as 0/1 only).
const char* storage_type(ElemType t) { return t == ElemType::Bool ? "uint8_t" : c_type(t); }

std::string literal(double v, ElemType t) {
  switch (t) {
    case ElemType::Bool: return v != 0 ? "true" : "false";
    case ElemType::I64: return fmt::format("INT64_C({})", static_cast<int64_t>(v));
    case ElemType::I32: return fmt::format("{}", static_cast<int32_t>(v));
    case ElemType::BF16:  // never lowered for the CPU (LowerContext::low_precision)
    case ElemType::F16:
    case ElemType::F32:
    case ElemType::F64: {
      const char* T = c_type(t);
      // As the kernel holds it: 1e39 is finite as a double and inf as a float ("inff" would not compile).
      const double held = t == ElemType::F32 ? static_cast<double>(static_cast<float>(v)) : v;
      if (std::isnan(held)) return fmt::format("std::numeric_limits<{}>::quiet_NaN()", T);
      if (std::isinf(held)) return fmt::format("{}std::numeric_limits<{}>::infinity()", held < 0 ? "-" : "", T);
      return t == ElemType::F32 ? fmt::format("{:#.9g}f", static_cast<float>(v)) : fmt::format("{:#.17g}", v);
    }
  }
  return "0";
}

class KernelWriter {
 public:
  explicit KernelWriter(const Kernel& k) : k_(k), row_(k.kind == KernelKind::Row), levels_(kernel_levels(k)) {}

  // The loops live in a range function that is not inlined into the OpenMP region: GCC does not
  // vectorise simd loops inside the outlined parallel body, but does in a plain function.
  std::string write(const std::string& name) {
    if (k_.kind == KernelKind::Column) return write_column(name);
    const int R = k_.rank;
    std::string s = fmt::format("// {}\nstatic __attribute__((noinline)) void {}_range(const void* const* in_, void* const* out_, "
                                "const int64_t* sz, const int64_t* st, int64_t w0, int64_t w1) {{\n",
                                fmt::join(k_.op_names, ", "), name);
    s += "  (void)st;\n";
    for (size_t i = 0; i < k_.inputs.size(); ++i) {
      s += fmt::format("  const {0}* __restrict in{1} = static_cast<const {0}*>(in_[{1}]);\n", storage_type(k_.inputs[i].type), i);
    }
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      s += fmt::format("  {0}* __restrict out{1} = static_cast<{0}*>(out_[{1}]);\n", storage_type(out_type(i)), i);
    }
    s += fmt::format("  const int64_t inner = sz[{}];\n", R - 1);
    if (row_) s += write_row_loops(R);
    else s += write_pointwise_loops(R);
    s += "}\n";
    // The entry point: splits the work into chunks, one parallel loop over them.
    s += fmt::format("extern \"C\" void {}(const void* const* in_, void* const* out_, const int64_t* sz, const int64_t* st) {{\n", name);
    s += entry_sizes(R);
    if (row_) {
      s += "  const int64_t work = outer;\n";
    } else {
      s += "  const int64_t tile = (inner > 8192 && outer < 64) ? 4096 : (inner > 0 ? inner : 1);\n";
      s += "  const int64_t work = outer * ((inner + tile - 1) / tile);\n";
    }
    s += "  const int64_t chunks = std::min<int64_t>(work, 512);\n";
    s += "  if (outer * inner < 32768 || chunks <= 1) {\n";
    s += fmt::format("    {}_range(in_, out_, sz, st, 0, work);\n    return;\n  }}\n", name);
    s += "  #pragma omp parallel for schedule(static)\n";
    s += "  for (int64_t c = 0; c < chunks; ++c) {\n";
    s += fmt::format("    {}_range(in_, out_, sz, st, c * work / chunks, (c + 1) * work / chunks);\n", name);
    s += "  }\n}\n";
    return s;
  }

 private:
  // An entry point's `inner` (the innermost dim) and `outer` (the product of the others).
  static std::string entry_sizes(int R) {
    std::string s = fmt::format("  const int64_t inner = sz[{}];\n  int64_t outer = 1;\n", R - 1);
    for (int d = 0; d < R - 1; ++d) s += fmt::format("  outer *= sz[{}];\n", d);
    return s;
  }

  ElemType out_type(size_t i) const { return k_.nodes[static_cast<size_t>(k_.outputs[i].expr)].type; }

  // Offsets of every input for outer index `o` (dims 0..R-2), then row/tile pointers.
  std::string outer_offsets(int R, const std::string& indent) const {
    std::string s = indent + "int64_t rem = o;\n";
    for (size_t i = 0; i < k_.inputs.size(); ++i) s += fmt::format("{}int64_t b{} = 0;\n", indent, i);
    for (int d = R - 2; d >= 0; --d) {
      s += fmt::format("{}{{ const int64_t ix = rem % sz[{}]; rem /= sz[{}];", indent, d, d);
      for (size_t i = 0; i < k_.inputs.size(); ++i) s += fmt::format(" b{} += ix * st[{}];", i, static_cast<int>(i) * R + d);
      s += " }\n";
    }
    s += indent + "(void)rem;\n";
    for (size_t i = 0; i < k_.inputs.size(); ++i) {
      s += fmt::format("{}const {}* __restrict p{} = in{} + b{};\n", indent, storage_type(k_.inputs[i].type), i, i, i);
      if (k_.inputs[i].inner == InnerStride::Strided) {
        s += fmt::format("{}const int64_t s{} = st[{}];\n", indent, i, static_cast<int>(i) * R + R - 1);
      }
    }
    return s;
  }

  std::string node_expr(size_t i, const char* j) const {
    const ExprNode& n = k_.nodes[i];
    const char* T = c_type(n.type);
    bool fp = is_floating(n.type);
    bool f32 = n.type == ElemType::F32;
    auto a = [&](size_t idx) { return fmt::format("t{}", n.args[idx]); };
    std::vector<std::string> args;
    for (size_t i = 0; i < n.args.size(); ++i) args.push_back(a(i));
    if (std::string e = c_operator_expr(n.op, args); !e.empty()) return e;
    switch (n.op) {
      case ExprOp::Load: {
        const KernelInput& in = k_.inputs[static_cast<size_t>(n.input)];
        std::string e = in.inner == InnerStride::Broadcast ? fmt::format("p{}[0]", n.input)
                        : in.inner == InnerStride::Strided ? fmt::format("p{}[{} * s{}]", n.input, j, n.input)
                                                           : fmt::format("p{}[{}]", n.input, j);
        return in.type == ElemType::Bool ? "(" + e + " != 0)" : e;
      }
      case ExprOp::Const: return literal(n.value, n.type);
      case ExprOp::RowLen: return fmt::format("static_cast<{}>(inner)", T);
      case ExprOp::Cast: return fmt::format("static_cast<{}>({})", T, a(0));
      case ExprOp::Abs: return fp ? fmt::format("std::fabs({})", a(0)) : fmt::format("({0} < 0 ? -{0} : {0})", a(0));
      case ExprOp::Exp: return fmt::format(fmt::runtime(f32 ? "tc_exp({})" : "std::exp({})"), a(0));
      case ExprOp::Log: return fmt::format("std::log({})", a(0));
      case ExprOp::Sqrt: return fmt::format("std::sqrt({})", a(0));
      case ExprOp::Rsqrt: return fmt::format("(static_cast<{}>(1) / std::sqrt({}))", T, a(0));
      case ExprOp::Tanh: return fmt::format(fmt::runtime(f32 ? "tc_tanh({})" : "std::tanh({})"), a(0));
      case ExprOp::Erf: return fmt::format(fmt::runtime(f32 ? "tc_erf({})" : "std::erf({})"), a(0));
      case ExprOp::NormCdf:
        return fmt::format(fmt::runtime(f32 ? "tc_norm_cdf({})" : "(0.5 * std::erfc({} * -0.70710678118654752440))"), a(0));
      case ExprOp::GeluGrad: return fmt::format("tc_gelu_grad({})", a(0));
      case ExprOp::Sigmoid: return fmt::format("tc_sigmoid({})", a(0));
      case ExprOp::Sin: return fmt::format("std::sin({})", a(0));
      case ExprOp::Cos: return fmt::format("std::cos({})", a(0));
      case ExprOp::Floor: return fmt::format("std::floor({})", a(0));
      case ExprOp::Ceil: return fmt::format("std::ceil({})", a(0));
      case ExprOp::Round: return fmt::format("std::nearbyint({})", a(0));
      case ExprOp::Recip: return fmt::format("(static_cast<{}>(1) / {})", T, a(0));
      case ExprOp::Max: return fmt::format("tc_max<{}>({}, {})", T, a(0), a(1));
      case ExprOp::Min: return fmt::format("tc_min<{}>({}, {})", T, a(0), a(1));
      case ExprOp::Pow: return fmt::format("static_cast<{}>(std::pow({}, {}))", T, a(0), a(1));
      // <T>: an operand may be a wider accumulator (a row's double sum), rounded to T as eager's
      // tensor of it is.
      case ExprOp::Fma:
        return fp ? fmt::format("tc_fma<{}>({}, {}, {})", T, a(0), a(1), a(2)) : fmt::format("({} * {} + {})", a(0), a(1), a(2));
      case ExprOp::Neg: case ExprOp::Not: case ExprOp::Add: case ExprOp::Sub: case ExprOp::Mul:
      case ExprOp::Div: case ExprOp::Eq: case ExprOp::Ne: case ExprOp::Lt: case ExprOp::Le: case ExprOp::Gt:
      case ExprOp::Ge: case ExprOp::And: case ExprOp::Or: case ExprOp::Where: break;  // c_operator_expr
      case ExprOp::ReduceSum:
      case ExprOp::ReduceMax:
      case ExprOp::ReduceMin: break;  // accumulators, written by the row loops
    }
    return "0";
  }

  // Emits definitions of the nodes `roots` need that are not yet in `defined`. `stop_at_uniform`:
  // inside a row's element loop, uniform nodes are row-scope variables (must already exist).
  void emit_needed(const std::vector<int>& roots, std::vector<bool>& defined, std::string& body,
                   const std::string& indent, const char* j, bool stop_at_uniform) const {
    for (int n : nodes_needed(k_, levels_, roots, defined, stop_at_uniform)) {
      body += fmt::format("{}const {} t{} = {};\n", indent, c_type(k_.nodes[static_cast<size_t>(n)].type), n,
                          node_expr(static_cast<size_t>(n), j));
      defined[static_cast<size_t>(n)] = true;
    }
  }

  std::vector<int> uniform_leaves(const std::vector<int>& roots, const std::vector<bool>& defined) const {
    return tcprof::uniform_leaves(k_, levels_, roots, defined);
  }

  std::string write_pointwise_loops(int R) const {
    std::string s;
    // Big inner dimensions are split in tiles so that both threads get work when outer is small.
    s += "  int64_t outer = 1;\n";
    for (int d = 0; d < R - 1; ++d) s += fmt::format("  outer *= sz[{}];\n", d);
    s += "  const int64_t tile = (inner > 8192 && outer < 64) ? 4096 : (inner > 0 ? inner : 1);\n";
    s += "  const int64_t ntiles = (inner + tile - 1) / tile;\n";
    s += "  for (int64_t w = w0; w < w1; ++w) {\n";
    s += "    const int64_t o = w / ntiles;\n";
    s += "    const int64_t i0 = (w % ntiles) * tile;\n";
    s += "    const int64_t i1 = std::min(inner, i0 + tile);\n";
    s += outer_offsets(R, "    ");
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      s += fmt::format("    {}* __restrict q{} = out{} + o * inner;\n", storage_type(out_type(i)), i, i);
    }
    s += "    #pragma omp simd\n    for (int64_t i = i0; i < i1; ++i) {\n";
    std::vector<bool> defined(k_.nodes.size(), false);
    std::vector<int> roots;
    for (const auto& o : k_.outputs) roots.push_back(o.expr);
    emit_needed(roots, defined, s, "      ", "i", false);
    for (size_t i = 0; i < k_.outputs.size(); ++i) s += fmt::format("      q{}[i] = t{};\n", i, k_.outputs[i].expr);
    s += "    }\n  }\n";
    return s;
  }

  std::string write_row_loops(int R) const {
    std::string s;
    s += "  for (int64_t o = w0; o < w1; ++o) {\n";
    s += outer_offsets(R, "    ");
    std::vector<bool> defined(k_.nodes.size(), false);
    const int max_level = levels_.max_level;
    // Softmax-shaped outputs store e while summing and divide in place afterwards.
    std::vector<bool> reuse = outputs_divided_in_place(k_, levels_);
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      if (!k_.outputs[i].per_row) s += fmt::format("    {}* __restrict q{} = out{} + o * inner;\n", storage_type(out_type(i)), i, i);
    }
    for (int L = 1; L <= max_level; ++L) {
      std::vector<int> reductions = levels_.reductions_at(L), args;
      for (int r : reductions) args.push_back(k_.nodes[static_cast<size_t>(r)].args[0]);
      emit_needed(uniform_leaves(args, defined), defined, s, "    ", "0", false);
      std::string clauses;
      for (int r : reductions) {
        const ExprNode& n = k_.nodes[static_cast<size_t>(r)];
        const char* T = c_type(n.type);
        std::string init = n.op == ExprOp::ReduceSum ? fmt::format("static_cast<{}>(0)", T)
                           : n.op == ExprOp::ReduceMax ? fmt::format("std::numeric_limits<{}>::lowest()", T)
                                                       : fmt::format("std::numeric_limits<{}>::max()", T);
        if (is_floating(n.type) && n.op != ExprOp::ReduceSum) {
          init = fmt::format("{}std::numeric_limits<{}>::infinity()", n.op == ExprOp::ReduceMax ? "-" : "", T);
        }
        // The accumulation rule of row sums, one for every backend (kernel_levels.h).
        if (sum_accumulates_in_double(k_, r)) T = "double", init = "0.0";
        s += fmt::format("    {} t{} = {};\n", T, r, init);
        clauses += fmt::format(" reduction({}:t{})", n.op == ExprOp::ReduceSum ? "+" : n.op == ExprOp::ReduceMax ? "max" : "min", r);
      }
      s += fmt::format("    #pragma omp simd{}\n    for (int64_t j = 0; j < inner; ++j) {{\n", clauses);
      std::vector<bool> in_loop = defined;
      emit_needed(args, in_loop, s, "      ", "j", true);
      for (int r : reductions) {
        const ExprNode& n = k_.nodes[static_cast<size_t>(r)];
        int a = n.args[0];
        if (n.op == ExprOp::ReduceSum) s += fmt::format("      t{} += t{};\n", r, a);
        else if (n.op == ExprOp::ReduceMax) s += fmt::format("      t{0} = t{1} > t{0} ? t{1} : t{0};\n", r, a);
        else s += fmt::format("      t{0} = t{1} < t{0} ? t{1} : t{0};\n", r, a);
      }
      if (L == max_level) {
        for (size_t i = 0; i < k_.outputs.size(); ++i) {
          if (reuse[i]) s += fmt::format("      q{}[j] = t{};\n", i, k_.nodes[static_cast<size_t>(k_.outputs[i].expr)].args[0]);
        }
      }
      s += "    }\n";
      for (int r : reductions) defined[static_cast<size_t>(r)] = true;
    }
    const auto [element_roots, row_roots, reused] = row_output_roots(k_, reuse);
    if (!element_roots.empty() || !reused.empty()) {
      std::vector<int> uniform_roots = element_roots;
      uniform_roots.insert(uniform_roots.end(), reused.begin(), reused.end());
      emit_needed(uniform_leaves(uniform_roots, defined), defined, s, "    ", "0", false);
      s += "    #pragma omp simd\n    for (int64_t j = 0; j < inner; ++j) {\n";
      std::vector<bool> in_loop = defined;
      emit_needed(element_roots, in_loop, s, "      ", "j", true);
      for (size_t i = 0; i < k_.outputs.size(); ++i) {
        const KernelOutput& o = k_.outputs[i];
        if (o.per_row) continue;
        if (reuse[i]) s += fmt::format("      q{0}[j] = q{0}[j] / t{1};\n", i, k_.nodes[static_cast<size_t>(o.expr)].args[1]);
        else s += fmt::format("      q{}[j] = t{};\n", i, o.expr);
      }
      s += "    }\n";
    }
    if (!row_roots.empty()) {
      emit_needed(row_roots, defined, s, "    ", "0", false);
      for (size_t i = 0; i < k_.outputs.size(); ++i) {
        if (k_.outputs[i].per_row) s += fmt::format("    out{}[o] = t{};\n", i, k_.outputs[i].expr);
      }
    }
    s += "  }\n";
    return s;
  }

  // Column kernels: rows [w0, w1) of the outer dims summed into `acc` (one run of `inner` doubles
  // per sum), the element outputs written on the way. Loads stay contiguous along the row and the
  // sums accumulate a vector of row elements at a time: over chunks of 32 rows in the operand's
  // own type (`part`), each chunk then added into the double total. Converting every element to
  // double took 4x as long as the float loop (0.40 against 0.10 ms over [512, 1024], AVX2); a
  // float chunk of 32 rounds no worse than eager's float sums.
  std::string write_column(const std::string& name) const {
    const int R = k_.rank;
    std::vector<int> sums;  // the per-column outputs' nodes, each summed once
    for (const auto& o : k_.outputs) {
      if (o.per_row && std::find(sums.begin(), sums.end(), o.expr) == sums.end()) sums.push_back(o.expr);
    }
    const auto sum_index = [&](int node) { return std::find(sums.begin(), sums.end(), node) - sums.begin(); };
    std::string s = fmt::format("// {}\nstatic __attribute__((noinline)) void {}_range(const void* const* in_, void* const* out_, "
                                "const int64_t* sz, const int64_t* st, int64_t w0, int64_t w1, double* __restrict acc, "
                                "void* __restrict part) {{\n",
                                fmt::join(k_.op_names, ", "), name);
    s += "  (void)st; (void)out_; (void)part;\n";
    for (size_t i = 0; i < k_.inputs.size(); ++i) {
      s += fmt::format("  const {0}* __restrict in{1} = static_cast<const {0}*>(in_[{1}]);\n", storage_type(k_.inputs[i].type), i);
    }
    s += fmt::format("  const int64_t inner = sz[{}];\n", R - 1);
    for (size_t a = 0; a < sums.size(); ++a) {
      const char* T = c_type(k_.nodes[static_cast<size_t>(sums[a])].type);
      s += fmt::format("  double* __restrict acc{0} = acc + {0} * inner;\n  for (int64_t j = 0; j < inner; ++j) acc{0}[j] = 0.0;\n", a);
      s += fmt::format("  {0}* __restrict part{1} = static_cast<{0}*>(part) + {1} * inner;\n", T, a);
    }
    s += "  for (int64_t c0 = w0; c0 < w1; c0 += 32) {\n    const int64_t c1 = std::min<int64_t>(w1, c0 + 32);\n";
    for (size_t a = 0; a < sums.size(); ++a) s += fmt::format("    for (int64_t j = 0; j < inner; ++j) part{}[j] = 0;\n", a);
    s += "    for (int64_t o = c0; o < c1; ++o) {\n";
    s += outer_offsets(R, "      ");
    std::vector<int> roots;
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      if (k_.outputs[i].per_row) continue;
      s += fmt::format("      {0}* __restrict q{1} = static_cast<{0}*>(out_[{1}]) + o * inner;\n", storage_type(out_type(i)), i);
      roots.push_back(k_.outputs[i].expr);
    }
    for (int r : sums) roots.push_back(k_.nodes[static_cast<size_t>(r)].args[0]);
    s += "      #pragma omp simd\n      for (int64_t j = 0; j < inner; ++j) {\n";
    std::vector<bool> defined(k_.nodes.size(), false);
    emit_needed(roots, defined, s, "        ", "j", false);
    for (int r : sums) s += fmt::format("        part{}[j] += t{};\n", sum_index(r), k_.nodes[static_cast<size_t>(r)].args[0]);
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      if (!k_.outputs[i].per_row) s += fmt::format("        q{}[j] = t{};\n", i, k_.outputs[i].expr);
    }
    s += "      }\n    }\n";
    for (size_t a = 0; a < sums.size(); ++a) {
      s += fmt::format("    #pragma omp simd\n    for (int64_t j = 0; j < inner; ++j) acc{0}[j] += static_cast<double>(part{0}[j]);\n", a);
    }
    s += "  }\n}\n";
    // The entry point: blocks of rows summed apart (in parallel), then added in block order. Their
    // count depends on the shape alone, so a sum does not depend on the thread count.
    s += fmt::format("extern \"C\" void {}(const void* const* in_, void* const* out_, const int64_t* sz, const int64_t* st) {{\n", name);
    s += entry_sizes(R);
    s += fmt::format("  const int64_t sums = {};\n", sums.size());
    // At most 16 blocks, and 8 MB each of totals and chunk sums.
    s += "  const int64_t cap = std::max<int64_t>(1, (INT64_C(1) << 20) / std::max<int64_t>(1, sums * inner));\n";
    s += "  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(std::min<int64_t>(outer, 16), cap));\n";
    s += "  double* acc = new double[static_cast<size_t>(std::max<int64_t>(1, blocks * sums * inner))];\n";
    s += "  double* part = new double[static_cast<size_t>(std::max<int64_t>(1, blocks * sums * inner))];  // wide enough for any sum's type\n";
    s += "  #pragma omp parallel for schedule(static) if (outer * inner >= 32768)\n";
    s += "  for (int64_t b = 0; b < blocks; ++b) {\n";
    s += fmt::format("    {}_range(in_, out_, sz, st, b * outer / blocks, (b + 1) * outer / blocks, acc + b * sums * inner, part + b * sums * inner);\n  }}\n", name);
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      if (!k_.outputs[i].per_row) continue;
      const char* T = storage_type(out_type(i));
      s += fmt::format("  {{\n    {0}* __restrict q = static_cast<{0}*>(out_[{1}]);\n    const double* __restrict a = acc + {2} * inner;\n", T, i,
                       sum_index(k_.outputs[i].expr));
      s += "    for (int64_t j = 0; j < inner; ++j) {\n      double t = a[j];\n";
      s += "      for (int64_t b = 1; b < blocks; ++b) t += a[b * sums * inner + j];\n";
      s += fmt::format("      q[j] = static_cast<{}>(t);\n    }}\n  }}\n", T);
    }
    s += "  delete[] part;\n  delete[] acc;\n}\n";
    return s;
  }

  const Kernel& k_;
  bool row_;
  KernelLevels levels_;
};

}  // namespace

std::string generate_kernel(const Kernel& kernel, const std::string& name) {
  return KernelWriter(kernel).write(name);
}

GeneratedUnit generate_unit(const LoopProgram& program) {
  GeneratedUnit unit;
  unit.source = codegen_prelude();
  std::map<std::string, std::string> by_body;  // body with a placeholder name -> symbol
  auto add = [&](const std::string& body) {
    auto it = by_body.find(body);
    if (it != by_body.end()) return it->second;
    std::string symbol = "tk_" + sha256_hex(body).substr(0, 16);
    std::string text = body;
    for (size_t pos = text.find("@NAME@"); pos != std::string::npos; pos = text.find("@NAME@", pos)) text.replace(pos, 6, symbol);
    unit.source += text + "\n";
    by_body.emplace(body, symbol);
    ++unit.unique_kernels;
    return symbol;
  };
  for (const auto& k : program.kernels) unit.kernel_symbols.push_back(add(generate_kernel(k, "@NAME@")));
  for (const auto& k : program.window_kernels) {
    unit.window_symbols.push_back(k.generated() || k.generated_epilogue() ? add(generate_window_kernel(k, "@NAME@")) : "");
  }
  return unit;
}

}  // namespace tcprof
