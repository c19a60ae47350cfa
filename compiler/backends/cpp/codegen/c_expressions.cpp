#include "compiler/backends/cpp/codegen/c_expressions.h"

#include <fmt/format.h>

namespace tcprof {

std::string c_operator_expr(ExprOp op, const std::vector<std::string>& a) {
  auto binary = [&](const char* sign) { return fmt::format("({} {} {})", a[0], sign, a[1]); };
  switch (op) {
    case ExprOp::Neg: return fmt::format("(-{})", a[0]);
    case ExprOp::Not: return fmt::format("(!{})", a[0]);
    case ExprOp::Add: return binary("+");
    case ExprOp::Sub: return binary("-");
    case ExprOp::Mul: return binary("*");
    case ExprOp::Div: return binary("/");
    case ExprOp::Eq: return binary("==");
    case ExprOp::Ne: return binary("!=");
    case ExprOp::Lt: return binary("<");
    case ExprOp::Le: return binary("<=");
    case ExprOp::Gt: return binary(">");
    case ExprOp::Ge: return binary(">=");
    case ExprOp::And: return binary("&&");
    case ExprOp::Or: return binary("||");
    case ExprOp::Where: return fmt::format("({} ? {} : {})", a[0], a[1], a[2]);
    default: return "";
  }
}

}  // namespace tcprof
