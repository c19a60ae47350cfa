// What the capture interpreter knows about each TorchScript value while it walks a method with
// real inputs (Dynamo's VariableTrackers, in spirit).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "compiler/ir/sym_expr.h"

namespace tcprof {

struct Var;
using VarPtr = std::shared_ptr<const Var>;

struct Var {
  enum class Kind {
    Constant,  // known at capture and the same on every call: literals, modules, parameters
    Tensor,    // a tensor in the captured graph (a frame input or an op's output)
    Scalar,    // an int/float/bool derived from inputs: `expr` says how (may be symbolic)
    GraphValue,  // a non-tensor value computed by the graph (e.g. a list of tensors)
    List,      // a list built at capture time from other values
    Tuple,
    Input,     // in a resume template: stands for frame input number `slot`
  };
  Kind kind = Kind::Constant;
  c10::IValue value;  // the value in this capture run (for Tensor: the real tensor)
  int slot = -1;      // Tensor/GraphValue: slot in the captured graph
  // Tensor: per-dimension size expressions (Const for static dims); null when a dynamic size
  // went through an op without a shape rule.
  std::vector<SymExprPtr> sizes;
  SymExprPtr expr;              // Scalar: how it derives from frame inputs
  std::vector<VarPtr> items;    // List/Tuple
  c10::TypePtr type;            // List: element type, for rebuilding typed lists
  std::string module_path;      // Constant module objects: "blocks.0.attn"

  bool is_constant() const { return kind == Kind::Constant; }
  // True when the value cannot change between calls that pass the frame's guards.
  bool is_static() const;

  static VarPtr constant(c10::IValue v, std::string module_path = {});
  static VarPtr scalar(c10::IValue v, SymExprPtr expr);
};

}  // namespace tcprof
