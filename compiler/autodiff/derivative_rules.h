// Derivative rules: for each differentiable aten op, the ops that turn its output gradients into
// its input gradients, written into the backward graph (Inductor's derivatives.yaml, as a table
// like the lowering table). The joint-graph builder calls the rule of each forward op in reverse
// order; a rule reads the example values of the op's arguments for shapes, which are static in a
// training graph.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "compiler/autodiff/graph_builder.h"

namespace tcprof {

// Thrown by a rule for an argument combination it does not differentiate (the graph then runs
// eagerly with a hint naming the op and this reason).
struct NoDerivative : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a rule sees of one forward op, and how it hands back gradients.
class GradContext {
 public:
  virtual ~GradContext() = default;
  virtual const GraphOp& op() const = 0;
  // Argument `i` as an argument of an emitted op (its forward slot, or its constant).
  virtual BuildArg arg(size_t i) const = 0;
  virtual Val out(size_t i = 0) const = 0;             // forward output slot
  virtual const c10::IValue& value(size_t i) const = 0;  // argument i in the example run
  virtual const c10::IValue& out_value(size_t i = 0) const = 0;
  virtual bool needs(size_t i) const = 0;              // argument i (a slot) requires a gradient
  virtual Val grad(size_t out = 0) const = 0;          // the gradient of output `out` (slot -1: none)
  virtual std::vector<Val> item_grads(size_t out = 0) const = 0;  // a list output's, per item
  virtual void add(size_t i, Val g) = 0;               // accumulates into argument i's gradient
  virtual void add_items(size_t i, const std::vector<Val>& g) = 0;  // argument i is a tensor list
  virtual GraphBuilder& builder() = 0;

  Val emit(const std::string& name, const std::vector<BuildArg>& args) { return builder().emit1(name, args, &op()); }
  std::vector<Val> emit_all(const std::string& name, const std::vector<BuildArg>& args) {
    return builder().emit(name, args, &op());
  }
  const at::Tensor& tensor(size_t i) const { return value(i).toTensor(); }
  std::vector<int64_t> sizes(size_t i) const { return tensor(i).sizes().vec(); }
  std::vector<int64_t> out_sizes(size_t i = 0) const { return out_value(i).toTensor().sizes().vec(); }
  bool has_arg(size_t i) const { return i < op().args.size() && !value(i).isNone(); }
  // `g` (shaped like `from`) summed to `to`'s shape, as broadcasting's gradient is: plain sums (a
  // bias's over the leading dims, which the cpp backend generates as column sums), not LibTorch's
  // sum_to_size.
  Val reduce_to(Val g, const std::vector<int64_t>& from, const std::vector<int64_t>& to);
};

using DerivativeRule = std::function<void(GradContext&)>;

// The rule for `op_name` ("aten::mul"), or null when it has none.
const DerivativeRule* derivative_rule(const std::string& op_name);
// Ops whose outputs never carry a gradient even when an input requires one (detach, *_like...).
bool is_non_differentiable(const std::string& op_name);
// Every op with a rule, sorted (documentation and the rule test's coverage check).
std::vector<std::string> differentiable_ops();

}  // namespace tcprof
