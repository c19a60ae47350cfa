#include "compiler/ir/sym_expr.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace tcprof {
namespace {

int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) throw std::domain_error("division by zero in a shape expression");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  if (b == 0) throw std::domain_error("modulo by zero in a shape expression");
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t apply(SymOp op, int64_t a, int64_t b) {
  switch (op) {
    case SymOp::Add: return a + b;
    case SymOp::Sub: return a - b;
    case SymOp::Mul: return a * b;
    case SymOp::FloorDiv: return floor_div(a, b);
    case SymOp::Mod: return floor_mod(a, b);
    case SymOp::Min: return std::min(a, b);
    case SymOp::Max: return std::max(a, b);
    case SymOp::Eq: return a == b;
    case SymOp::Ne: return a != b;
    case SymOp::Lt: return a < b;
    case SymOp::Le: return a <= b;
    case SymOp::Gt: return a > b;
    case SymOp::Ge: return a >= b;
    case SymOp::And: return (a != 0) && (b != 0);
    case SymOp::Or: return (a != 0) || (b != 0);
    default: return 0;
  }
}

const char* infix(SymOp op) {
  switch (op) {
    case SymOp::Add: return "+";
    case SymOp::Sub: return "-";
    case SymOp::Mul: return "*";
    case SymOp::FloorDiv: return "//";
    case SymOp::Mod: return "%";
    case SymOp::Eq: return "==";
    case SymOp::Ne: return "!=";
    case SymOp::Lt: return "<";
    case SymOp::Le: return "<=";
    case SymOp::Gt: return ">";
    case SymOp::Ge: return ">=";
    case SymOp::And: return "and";
    case SymOp::Or: return "or";
    default: return "?";
  }
}

int precedence(SymOp op) {
  switch (op) {
    case SymOp::Or: return 1;
    case SymOp::And: return 2;
    case SymOp::Not: return 3;
    case SymOp::Eq: case SymOp::Ne: case SymOp::Lt: case SymOp::Le: case SymOp::Gt:
    case SymOp::Ge: return 4;
    case SymOp::Add: case SymOp::Sub: return 5;
    case SymOp::Mul: case SymOp::FloorDiv: case SymOp::Mod: return 6;
    default: return 7;
  }
}

}  // namespace

SymExprPtr SymExpr::constant(int64_t v) {
  auto e = std::make_shared<SymExpr>();
  e->op = SymOp::Const;
  e->value = v;
  return e;
}

SymExprPtr SymExpr::input_dim(int input, int dim, bool dynamic) {
  auto e = std::make_shared<SymExpr>();
  e->op = SymOp::InputDim;
  e->value = input;
  e->dim = dim;
  e->dynamic = dynamic;
  return e;
}

SymExprPtr SymExpr::input_int(int input, bool dynamic) {
  auto e = std::make_shared<SymExpr>();
  e->op = SymOp::InputInt;
  e->value = input;
  e->dynamic = dynamic;
  return e;
}

SymExprPtr SymExpr::binary(SymOp op, SymExprPtr a, SymExprPtr b) {
  if (!a || !b) return nullptr;  // a size with no rule makes the result one too
  if (a->op == SymOp::Const && b->op == SymOp::Const) return constant(apply(op, a->value, b->value));
  auto e = std::make_shared<SymExpr>();
  e->op = op;
  e->dynamic = a->dynamic || b->dynamic;
  e->lhs = std::move(a);
  e->rhs = std::move(b);
  return e;
}

SymExprPtr SymExpr::negate(SymExprPtr a) {
  if (!a) return nullptr;
  if (a->op == SymOp::Const) return constant(a->value == 0);
  auto e = std::make_shared<SymExpr>();
  e->op = SymOp::Not;
  e->dynamic = a->dynamic;
  e->lhs = std::move(a);
  return e;
}

bool is_boolean(const SymExpr& e) {
  switch (e.op) {
    case SymOp::Eq: case SymOp::Ne: case SymOp::Lt: case SymOp::Le: case SymOp::Gt: case SymOp::Ge:
    case SymOp::And: case SymOp::Or: case SymOp::Not:
      return true;
    default:
      return false;
  }
}

int64_t evaluate(const SymExpr& e, const SymBindings& b) {
  switch (e.op) {
    case SymOp::Const: return e.value;
    case SymOp::InputDim: return b.input_dim(static_cast<int>(e.value), e.dim);
    case SymOp::InputInt: return b.input_int(static_cast<int>(e.value));
    case SymOp::Not: return evaluate(*e.lhs, b) == 0;
    default: return apply(e.op, evaluate(*e.lhs, b), evaluate(*e.rhs, b));
  }
}

std::string to_string(const SymExpr& e, const std::vector<std::string>& names) {
  auto name = [&](int64_t i) {
    return i >= 0 && static_cast<size_t>(i) < names.size() ? names[static_cast<size_t>(i)]
                                                           : fmt::format("input{}", i);
  };
  auto wrap = [&](const SymExpr& child, int parent) {
    std::string s = to_string(child, names);
    return precedence(child.op) < parent ? "(" + s + ")" : s;
  };
  switch (e.op) {
    case SymOp::Const: return std::to_string(e.value);
    case SymOp::InputDim: return fmt::format("{}.size({})", name(e.value), e.dim);
    case SymOp::InputInt: return name(e.value);
    case SymOp::Min: return fmt::format("min({}, {})", to_string(*e.lhs, names), to_string(*e.rhs, names));
    case SymOp::Max: return fmt::format("max({}, {})", to_string(*e.lhs, names), to_string(*e.rhs, names));
    case SymOp::Not: return "not " + wrap(*e.lhs, precedence(SymOp::Not) + 1);
    default: {
      int p = precedence(e.op);
      return fmt::format("{} {} {}", wrap(*e.lhs, p), infix(e.op), wrap(*e.rhs, p + 1));
    }
  }
}

SymProgram::SymProgram(const SymExpr& e) {
  emit(e);
  // Stack depth needed: bounded by the number of instructions.
  depth_ = static_cast<int>(code_.size());
  if (depth_ > 64) throw std::length_error("shape expression too large for a guard");
}

void SymProgram::emit(const SymExpr& e) {
  if (e.lhs) emit(*e.lhs);
  if (e.rhs) emit(*e.rhs);
  code_.push_back({e.op, e.dim, e.value});
}

int64_t SymProgram::run(const SymBindings& b) const {
  int64_t stack[64];
  int sp = 0;
  for (const Instr& in : code_) {
    switch (in.op) {
      case SymOp::Const: stack[sp++] = in.value; break;
      case SymOp::InputDim: stack[sp++] = b.input_dim(static_cast<int>(in.value), in.dim); break;
      case SymOp::InputInt: stack[sp++] = b.input_int(static_cast<int>(in.value)); break;
      case SymOp::Not: stack[sp - 1] = stack[sp - 1] == 0; break;
      default:
        --sp;
        stack[sp - 1] = apply(in.op, stack[sp - 1], stack[sp]);
    }
  }
  return sp > 0 ? stack[sp - 1] : 0;
}

}  // namespace tcprof
