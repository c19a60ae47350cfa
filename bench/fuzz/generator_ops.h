// The generator's op catalog: one function per kind of op. Each reads the subject value (index
// `si` into GeneratorState::vars()) and maybe picks partners, checks that the op is valid in
// eager and meaningful to compare (the rules in graph_generator.h), and emits one statement.
// false means "not applicable here": the driver (graph_generator.cpp) tries another op or subject.
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/fuzz/generator_state.h"

namespace tcprof::fuzz {

// Pointwise (ops_pointwise.cpp).
bool op_unary_neg(GeneratorState& g, int si);
bool op_unary(GeneratorState& g, int si);
bool op_activation(GeneratorState& g, int si);
bool op_pow(GeneratorState& g, int si);
bool op_rounding(GeneratorState& g, int si);
bool op_arith(GeneratorState& g, int si);
bool op_div(GeneratorState& g, int si);
bool op_rsub(GeneratorState& g, int si);
bool op_max_min(GeneratorState& g, int si);
bool op_compare(GeneratorState& g, int si);
bool op_where(GeneratorState& g, int si);
bool op_masked_fill(GeneratorState& g, int si);
bool op_logical_not(GeneratorState& g, int si);
bool op_mul_mask(GeneratorState& g, int si);

// Rows, views and in-place (ops_structure.cpp).
bool op_softmax(GeneratorState& g, int si);
bool op_layer_norm(GeneratorState& g, int si);
bool op_reduce(GeneratorState& g, int si);
bool op_batch_norm(GeneratorState& g, int si);
bool op_contiguous(GeneratorState& g, int si);
bool op_transpose(GeneratorState& g, int si);
bool op_permute(GeneratorState& g, int si);
bool op_unsqueeze(GeneratorState& g, int si);
bool op_slice(GeneratorState& g, int si);
bool op_expand(GeneratorState& g, int si);
bool op_reshape(GeneratorState& g, int si);
bool op_inplace(GeneratorState& g, int si);
bool op_inplace_view(GeneratorState& g, int si);
bool op_conv2d(GeneratorState& g, int si);
bool op_attention(GeneratorState& g, int si);
bool op_linear(GeneratorState& g, int si);
bool op_max_pool2d(GeneratorState& g, int si);
bool op_cat_channels(GeneratorState& g, int si);

// ---- shared by the ops ------------------------------------------------------------------------

inline const Var& var(GeneratorState& g, int i) { return g.vars()[static_cast<size_t>(i)]; }

inline Participant participant_of(const Var& v) {
  return {v.dtype, v.shape.empty() ? Participant::Kind::ZeroDim : Participant::Kind::Dimensioned};
}

// A result with the subject's shape and layout.
inline Var like(const Var& s, ST dtype, double bound, bool exact) {
  Var v;
  v.shape = s.shape;
  v.dtype = dtype;
  v.bound = bound;
  v.exact = exact;
  v.contiguous = s.contiguous;
  return v;
}

inline bool within_cap(ST dtype, double bound) {
  return is_float(dtype) ? bound <= kFloatCap : is_int(dtype) ? bound <= kIntCap : true;
}

// Emits a compute statement unless its values would outgrow the cap.
// Results stay under 16M elements at their largest dynamic size: a broadcast of [11454, 1] against
// [12 * 11454] (seed 20261207, case 185123043623700) made 1.6G elements and the process was killed
// for memory before any call was compared.
constexpr int64_t kMaxResultElements = int64_t{1} << 24;

inline bool emit(GeneratorState& g, const std::string& expr, const Var& v, const std::string& label,
                 const std::vector<int>& reads) {
  if (!within_cap(v.dtype, v.bound) || numel_estimate(v.shape) > kMaxResultElements) return false;
  g.emit_compute(expr, v, label, reads);
  return true;
}

inline std::vector<int> reads_of(int subject, const Operand& other) {
  return other.var >= 0 ? std::vector<int>{subject, other.var} : std::vector<int>{subject};
}

// Scaling by a power of two is exact (no rounding).
inline bool power_of_two(double v) {
  int e;
  return v != 0 && std::fabs(std::frexp(v, &e)) == 0.5;
}

inline std::string dims_text(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ", ")); }

}  // namespace tcprof::fuzz
