// The primitives both code generators (cpp and cuda) print alike: C's operators and the ternary.
// Math functions and conversions differ per dialect and stay in each generator.
#pragma once
#include <string>
#include <vector>

#include "compiler/backends/cpp/lower/loop_ir.h"

namespace tcprof {

// "(t1 + t2)" for ExprOp::Add over args {"t1", "t2"}, and so on; empty for ops whose C differs
// between the dialects (math, casts, min/max, fma, loads, constants, reductions).
std::string c_operator_expr(ExprOp op, const std::vector<std::string>& args);

}  // namespace tcprof
