// Functionalization of in-place ops. `relu_(x)` may become `relu(x)` only when nothing can see
// the difference: x is a fresh tensor made inside this graph (not a frame input, a constant or a
// view of another tensor), and no op after this one, nor the graph's result, reads x itself.
#include <set>

#include "compiler/backends/cpp/passes/graph_passes.h"

namespace tcprof {

int functionalize_inplace(PassContext& ctx) {
  CapturedGraph& g = ctx.graph;
  std::vector<int> last_read(static_cast<size_t>(g.num_slots), -1);
  std::vector<int> readers(static_cast<size_t>(g.num_slots), 0);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (int s : slots_read(g.ops[i])) {
      last_read[static_cast<size_t>(s)] = static_cast<int>(i);
      ++readers[static_cast<size_t>(s)];
    }
  }
  std::set<int> outputs(g.outputs.begin(), g.outputs.end());
  std::vector<bool> fresh(static_cast<size_t>(g.num_slots), false);
  int count = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    GraphOp& op = g.ops[i];
    bool inplace = !op.name.empty() && op.name.back() == '_';
    if (inplace && !op.args.empty() && op.args[0].kind == Arg::Kind::Slot && op.outputs.size() == 1) {
      int target = op.args[0].slot;
      bool safe = fresh[static_cast<size_t>(target)] && outputs.count(target) == 0 &&
                  last_read[static_cast<size_t>(target)] == static_cast<int>(i) &&
                  readers[static_cast<size_t>(target)] == 1;  // an earlier reader may be a view (alias)
      // The op must not read its target through another argument either (x.add_(x) is fine
      // functionally, so only the later-read rule matters).
      if (safe) {
        op.name.pop_back();
        ++count;
        fresh[static_cast<size_t>(op.outputs[0])] = true;
        continue;
      }
    }
    bool makes_fresh = !inplace && !is_view_op(op.name) && op.name.rfind("prim::", 0) != 0;
    for (int s : op.outputs) fresh[static_cast<size_t>(s)] = makes_fresh;
  }
  return count;
}

bool writes_outside_graph(const CapturedGraph& g) {
  // outside[s]: slot s is (a view of) memory from outside the graph; frame inputs are slots 0..n-1.
  std::vector<bool> outside(static_cast<size_t>(g.num_slots), false);
  for (size_t i = 0; i < g.inputs.size() && i < outside.size(); ++i) outside[i] = true;
  for (const GraphOp& op : g.ops) {
    const bool inplace = !op.name.empty() && op.name.back() == '_' && op.name.rfind("prim::", 0) != 0;
    const bool aliases = inplace || is_view_op(op.name);
    bool first_outside = false;
    if (!op.args.empty()) {
      const Arg& first = op.args[0];
      first_outside = first.kind == Arg::Kind::Slot ? outside[static_cast<size_t>(first.slot)]
                                                    : first.kind == Arg::Kind::Constant && first.constant.isTensor();
    }
    if (inplace && first_outside) return true;
    for (int s : op.outputs) outside[static_cast<size_t>(s)] = aliases && first_outside;
  }
  return false;
}

}  // namespace tcprof
