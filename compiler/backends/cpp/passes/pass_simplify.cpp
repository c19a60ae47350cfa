// Simplification: eval-mode dropout is the identity; identical pure ops are computed once
// (common-subexpression elimination); pure ops nobody reads are removed (dead-code elimination).
#include <map>
#include <set>

#include <fmt/format.h>

#include "compiler/backends/cpp/passes/graph_passes.h"

namespace tcprof {
namespace {

Arg slot_arg(int slot) {
  Arg a;
  a.kind = Arg::Kind::Slot;
  a.slot = slot;
  return a;
}

// A key that is equal for two argument lists exactly when they are the same values.
bool arg_key(const Arg& a, std::string& key) {
  switch (a.kind) {
    case Arg::Kind::Slot: key += fmt::format("%{};", a.slot); return true;
    case Arg::Kind::Sym: return false;
    case Arg::Kind::List:
      key += "[";
      for (const auto& item : a.items) {
        if (!arg_key(item, key)) return false;
      }
      key += "];";
      return true;
    case Arg::Kind::Constant: break;
  }
  const c10::IValue& v = a.constant;
  if (v.isTensor()) key += fmt::format("T{};", static_cast<const void*>(v.toTensor().unsafeGetTensorImpl()));
  else if (v.isNone()) key += "N;";
  else if (v.isBool()) key += v.toBool() ? "b1;" : "b0;";
  else if (v.isInt()) key += fmt::format("i{};", v.toInt());
  else if (v.isDouble()) key += fmt::format("d{};", v.toDouble());
  else if (v.isString()) key += fmt::format("s{};", v.toStringRef());
  else if (v.isIntList()) key += fmt::format("l{};", fmt::join(v.toIntVector(), ","));
  else return false;
  return true;
}

bool is_eval_dropout(const GraphOp& op) {
  return (op.name == "aten::dropout" || op.name == "aten::feature_dropout" || op.name == "aten::dropout_" ||
          op.name == "aten::feature_dropout_") && op.args.size() == 3 &&
         op.args[0].kind == Arg::Kind::Slot && op.args[2].kind == Arg::Kind::Constant &&
         op.args[2].constant.isBool() && !op.args[2].constant.toBool();
}

}  // namespace

int simplify_graph(PassContext& ctx) {
  CapturedGraph& g = ctx.graph;
  std::vector<bool> dead(g.ops.size(), false);
  std::map<std::string, size_t> seen;
  int removed = 0;
  // Two equal values stop being interchangeable once an in-place op writes one of them.
  bool mutates = false;
  for (const auto& op : g.ops) mutates = mutates || (!op.name.empty() && op.name.back() == '_' && !is_eval_dropout(op));
  for (size_t i = 0; i < g.ops.size(); ++i) {
    GraphOp& op = g.ops[i];
    if (is_eval_dropout(op) && replace_uses(g, op.outputs[0], slot_arg(op.args[0].slot))) {
      dead[i] = true;
      ++removed;
      continue;
    }
    if (mutates || !is_pure_op(op.name) || op.name.rfind("prim::", 0) == 0) continue;
    std::string key = op.name + "(";
    bool keyed = true;
    for (const auto& a : op.args) keyed = keyed && arg_key(a, key);
    if (!keyed) continue;
    auto it = seen.find(key);
    if (it == seen.end()) {
      seen.emplace(key, i);
      continue;
    }
    const GraphOp& first = g.ops[it->second];
    bool all = true;
    for (size_t o = 0; o < op.outputs.size(); ++o) all = replace_uses(g, op.outputs[o], slot_arg(first.outputs[o])) && all;
    if (all) {
      dead[i] = true;
      ++removed;
    }
  }
  // Dead code, from the end so that chains of unused ops go in one sweep.
  std::vector<int> readers(static_cast<size_t>(g.num_slots), 0);
  for (int s : g.outputs) ++readers[static_cast<size_t>(s)];
  for (size_t i = g.ops.size(); i-- > 0;) {
    const GraphOp& op = g.ops[i];
    if (!dead[i] && is_pure_op(op.name)) {
      bool used = false;
      for (int s : op.outputs) used = used || readers[static_cast<size_t>(s)] > 0;
      if (!used) {
        dead[i] = true;
        ++removed;
      }
    }
    if (dead[i]) continue;
    for (int s : slots_read(op)) ++readers[static_cast<size_t>(s)];
  }
  erase_ops(g, dead);
  return removed;
}

}  // namespace tcprof
