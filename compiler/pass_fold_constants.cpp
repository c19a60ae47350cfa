// Constant folding: an op whose arguments are all compile-time constants (a causal mask built
// with arange/triu, `mask == 0`) runs once here and its result becomes a constant. Tensors an
// in-place op of the graph mutates are not constants, so nothing reading them is folded.
#include <set>

#include <torch/csrc/jit/ir/ir.h>

#include "compiler/backend.h"
#include "compiler/graph_passes.h"

namespace tcprof {
namespace {

bool all_constant(const Arg& a, const std::set<const void*>& mutated) {
  if (a.kind == Arg::Kind::Slot || a.kind == Arg::Kind::Sym) return false;
  if (a.kind == Arg::Kind::Constant) {
    return !(a.constant.isTensor() && mutated.count(a.constant.toTensor().unsafeGetTensorImpl()));
  }
  for (const auto& item : a.items) {
    if (!all_constant(item, mutated)) return false;
  }
  return true;
}

}  // namespace

int fold_constants(PassContext& ctx) {
  CapturedGraph& g = ctx.graph;
  std::set<const void*> mutated;
  for (const auto& op : g.ops) {
    if (!is_pure_op(op.name) && !op.args.empty() && op.args[0].kind == Arg::Kind::Constant && op.args[0].constant.isTensor()) {
      mutated.insert(op.args[0].constant.toTensor().unsafeGetTensorImpl());
    }
  }
  std::vector<bool> dead(g.ops.size(), false);
  int count = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    GraphOp& op = g.ops[i];
    if (!is_pure_op(op.name) || !has_operation(op.node) || op.name.rfind("prim::", 0) == 0) continue;
    bool constant = true;
    for (const auto& a : op.args) constant = constant && all_constant(a, mutated);
    if (!constant) continue;
    torch::jit::Stack stack;
    for (const auto& a : op.args) stack.push_back(evaluate_arg(a, ctx.examples, ctx.bindings));
    try {
      run_node(op.node, stack);
    } catch (const std::exception&) {
      continue;  // leave it to run time, where the error is reported with the op's line
    }
    bool replaced = true;
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      Arg c;
      c.kind = Arg::Kind::Constant;
      c.constant = stack[o];
      ctx.examples[static_cast<size_t>(op.outputs[o])] = stack[o];
      replaced = replace_uses(g, op.outputs[o], c) && replaced;
    }
    if (replaced) {
      dead[i] = true;
      ++count;
    }
  }
  erase_ops(g, dead);
  return count;
}

}  // namespace tcprof
