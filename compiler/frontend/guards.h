// Guards: what a compiled entry assumes about its frame's inputs and the world. Checked on every
// call, newest entry first; the hit path is a loop over flat structs that never allocates.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/ivalue.h>

#include "compiler/frontend/source_location.h"
#include "compiler/ir/sym_expr.h"

namespace tcprof {

enum class GuardKind : uint8_t {
  Dtype, Device, Rank, Size, DynamicSize, Contiguous, RequiresGrad,  // tensor inputs
  IntValue, FloatValue, BoolValue,                                   // scalar inputs
  ShapeExpr,                                                         // a shape-derived decision
  Attribute,                                                         // a module attribute read
  GradMode,
  SameTensor,  // inputs `input` and `dim` are (expected = 1) or are not the same tensor
  // A module tensor (a parameter) read as a constant under grad mode still has requires_grad ==
  // expected: freezing or unfreezing it changes which gradients the training graph computes.
  ParamRequiresGrad,
};

struct Guard {
  GuardKind kind = GuardKind::Dtype;
  int input = -1;        // frame input index (tensor/scalar guards)
  int dim = -1;          // Size/DynamicSize
  int64_t expected = 0;  // dtype/device/rank/size/bool/int value, or the expr's expected result
  double expected_float = 0;
  SymExprPtr expr;       // ShapeExpr
  SymProgram program;
  // Attribute, ParamRequiresGrad: the object holding it and the slot, read on every call.
  c10::intrusive_ptr<c10::ivalue::Object> object;
  size_t attr_slot = 0;
  c10::IValue attr_value;
  bool implied = false;  // a ShapeExpr on static sizes: reported, but the size guards decide
  std::string text;      // e.g. "x.size(0) == 8", "self.training == False"
  SourceLoc loc;         // the user line that made the capture depend on it
};

std::string_view guard_kind_name(GuardKind kind);

// The outcome of a failed check, for guard_failures rows and recompile reasons.
struct GuardFailure {
  size_t guard_index = 0;
  std::string expected;
  std::string actual;
  std::string message;  // "tensor 'x' size mismatch at index 0: expected 8, actual 16"
};

class GuardSet {
 public:
  void add(Guard guard);
  // Gives guards on input i (that have no location yet) the location locs[i].
  void set_input_locations(const std::vector<SourceLoc>& locs);
  const std::vector<Guard>& guards() const { return guards_; }
  // Fast path: true when every guard holds. Does not allocate.
  bool check(const std::vector<c10::IValue>& inputs) const;
  // Slow path after check() failed: the first failing guard, explained.
  GuardFailure explain_failure(const std::vector<c10::IValue>& inputs,
                               const std::vector<std::string>& input_names) const;
  // Every guard that does not hold, in order (automatic dynamic marks each changed size).
  std::vector<size_t> failing(const std::vector<c10::IValue>& inputs) const;

 private:
  bool holds(const Guard& g, const std::vector<c10::IValue>& inputs) const;
  std::vector<Guard> guards_;
};

// Symbols bound to one call's frame inputs.
class InputBindings : public SymBindings {
 public:
  explicit InputBindings(const std::vector<c10::IValue>& inputs) : inputs_(inputs) {}
  int64_t input_dim(int input, int dim) const override;
  int64_t input_int(int input) const override;

 private:
  const std::vector<c10::IValue>& inputs_;
};

}  // namespace tcprof
