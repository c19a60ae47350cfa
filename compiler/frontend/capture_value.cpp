#include "compiler/frontend/capture_value.h"

namespace tcprof {

bool Var::is_static() const {
  switch (kind) {
    case Kind::Constant: return true;
    case Kind::Scalar: return !expr || !expr->dynamic;
    case Kind::List:
    case Kind::Tuple:
      for (const auto& item : items) {
        if (!item->is_static()) return false;
      }
      return true;
    default: return false;
  }
}

VarPtr Var::constant(c10::IValue v, std::string module_path) {
  auto var = std::make_shared<Var>();
  var->kind = Kind::Constant;
  var->value = std::move(v);
  var->module_path = std::move(module_path);
  return var;
}

VarPtr Var::scalar(c10::IValue v, SymExprPtr expr) {
  auto var = std::make_shared<Var>();
  var->kind = Kind::Scalar;
  var->value = std::move(v);
  var->expr = std::move(expr);
  return var;
}

}  // namespace tcprof
