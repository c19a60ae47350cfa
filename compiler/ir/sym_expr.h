// Symbolic integer expressions over a frame's inputs: sizes of input tensors (`x.size(1)`) and
// integer inputs. They let a compiled entry serve many shapes (dynamic dimensions) and record why
// a shape-derived decision was taken (`x.size(0) > 4`), which becomes a guard.
//
// Expressions are immutable trees shared by pointer. Guards compile them into a flat program
// (SymProgram) that evaluates without allocating.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tcprof {

enum class SymOp : uint8_t {
  Const, InputDim, InputInt,                  // leaves
  Add, Sub, Mul, FloorDiv, Mod, Min, Max,     // int arithmetic
  Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not,       // comparisons and logic (0/1)
};

struct SymExpr;
using SymExprPtr = std::shared_ptr<const SymExpr>;

struct SymExpr {
  SymOp op = SymOp::Const;
  int64_t value = 0;  // Const: the value; InputDim/InputInt: the input index
  int dim = 0;        // InputDim: the dimension
  SymExprPtr lhs, rhs;
  bool dynamic = false;  // depends on a symbol marked dynamic (not pinned by a size guard)

  static SymExprPtr constant(int64_t v);
  static SymExprPtr input_dim(int input, int dim, bool dynamic);
  static SymExprPtr input_int(int input, bool dynamic);
  static SymExprPtr binary(SymOp op, SymExprPtr a, SymExprPtr b);  // null when a or b is
  static SymExprPtr negate(SymExprPtr a);  // logical not; null when a is
};

// The values symbols take in one call: sizes per input (empty for non-tensors), ints per input.
struct SymBindings {
  virtual ~SymBindings() = default;
  virtual int64_t input_dim(int input, int dim) const = 0;
  virtual int64_t input_int(int input) const = 0;
};

int64_t evaluate(const SymExpr& e, const SymBindings& b);
// Comparisons and logic evaluate to 0/1 but stand for Python bools.
bool is_boolean(const SymExpr& e);
// Readable form with the frame's input names, e.g. "x.size(1) * 2 > 4".
std::string to_string(const SymExpr& e, const std::vector<std::string>& input_names);

// A postfix program for one expression: evaluation is a loop over a fixed array, no allocation.
class SymProgram {
 public:
  SymProgram() = default;
  explicit SymProgram(const SymExpr& e);
  int64_t run(const SymBindings& b) const;
  bool empty() const { return code_.empty(); }

 private:
  struct Instr {
    SymOp op;
    int32_t dim;
    int64_t value;
  };
  void emit(const SymExpr& e);
  std::vector<Instr> code_;
  int depth_ = 0;
};

}  // namespace tcprof
