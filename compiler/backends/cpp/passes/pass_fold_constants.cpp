// Constant folding: an op whose arguments are all compile-time constants (a causal mask built
// with arange/triu, `mask == 0`) runs once here and its result becomes a constant. Tensors an
// in-place op of the graph mutates are not constants, so nothing reading them is folded.
#include <set>

#include <torch/csrc/jit/ir/ir.h>

#include "compiler/backends/backend.h"
#include "compiler/backends/cpp/passes/graph_passes.h"

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
  // A folded value is one tensor shared by every call: if an in-place op writes it, or a view of
  // it, the next call would start from the written value. Values an in-place op reaches (its
  // target and, through view ops, the target's bases) are not folded.
  std::vector<int> producer(static_cast<size_t>(g.num_slots), -1);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (int s : g.ops[i].outputs) producer[static_cast<size_t>(s)] = static_cast<int>(i);
  }
  std::vector<bool> written(static_cast<size_t>(g.num_slots), false);
  for (const auto& op : g.ops) {
    if (op.name.empty() || op.name.back() != '_' || op.args.empty() || op.args[0].kind != Arg::Kind::Slot) continue;
    for (int s = op.args[0].slot; s >= 0 && !written[static_cast<size_t>(s)];) {
      written[static_cast<size_t>(s)] = true;
      int p = producer[static_cast<size_t>(s)];
      if (p < 0) break;
      const GraphOp& from = g.ops[static_cast<size_t>(p)];
      bool view = is_view_op(from.name) || (!from.name.empty() && from.name.back() == '_');
      s = view && !from.args.empty() && from.args[0].kind == Arg::Kind::Slot ? from.args[0].slot : -1;
    }
  }
  std::vector<bool> dead(g.ops.size(), false);
  int count = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    GraphOp& op = g.ops[i];
    if (!is_pure_op(op.name) || !has_operation(op.node) || op.name.rfind("prim::", 0) == 0) continue;
    bool reached = false;
    for (int s : op.outputs) reached = reached || written[static_cast<size_t>(s)];
    if (reached) continue;
    bool constant = true;
    for (const auto& a : op.args) constant = constant && all_constant(a, mutated);
    if (!constant) continue;
    torch::jit::Stack stack;
    for (const auto& a : op.args) stack.push_back(evaluate_arg(a, ctx.examples, ctx.bindings));
    try {
      run_op(op, stack);
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
