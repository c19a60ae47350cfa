// Helpers the graph passes share: which ops are pure or views, who reads a slot, and rewriting
// reads of one value into another.
#include <algorithm>
#include <set>

#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/backends/cpp/lower/lower_ops.h"

namespace tcprof {

bool is_pure_op(const std::string& name) {
  if (name.empty() || name.back() == '_') return false;  // in place
  static const std::set<std::string> impure = {
      "aten::rand", "aten::randn", "aten::randint", "aten::rand_like", "aten::randn_like", "aten::bernoulli",
      "aten::normal", "aten::multinomial", "aten::dropout", "aten::feature_dropout", "aten::alpha_dropout",
      "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty", "aten::uniform",
      "aten::copy", "aten::print", "aten::warn", "prim::RaiseException"};
  return impure.count(name) == 0;
}

bool writes_in_place(const GraphOp& op) {
  const std::string& n = op.name;
  return n.size() > 2 && n.back() == '_' && n[n.size() - 2] != '_';
}

bool is_view_op(const std::string& name) {
  static const std::set<std::string> views = {
      "aten::view", "aten::reshape", "aten::transpose", "aten::permute", "aten::slice", "aten::select",
      "aten::expand", "aten::squeeze", "aten::unsqueeze", "aten::flatten", "aten::t", "aten::split",
      "aten::chunk", "aten::unbind", "aten::narrow", "aten::contiguous", "aten::view_as", "aten::expand_as",
      "aten::detach", "aten::alias", "aten::numpy_T", "aten::unflatten", "aten::as_strided",
      "aten::diagonal", "aten::movedim", "aten::swapaxes", "aten::real", "aten::to", "aten::type_as",
      "aten::dropout", "aten::feature_dropout", "prim::ListUnpack", "prim::TupleUnpack",
      "prim::ListConstruct", "prim::TupleConstruct"};
  return views.count(name) > 0;
}

namespace {
void collect(const Arg& a, std::vector<int>& out) {
  if (a.kind == Arg::Kind::Slot) out.push_back(a.slot);
  for (const auto& item : a.items) collect(item, out);
}
bool replace_in(Arg& a, int from, const Arg& to) {
  bool changed = false;
  if (a.kind == Arg::Kind::Slot && a.slot == from) {
    a = to;
    changed = true;
  }
  for (auto& item : a.items) changed |= replace_in(item, from, to);
  return changed;
}
}  // namespace

std::vector<int> slots_read(const GraphOp& op) {
  std::vector<int> out;
  for (const auto& a : op.args) collect(a, out);
  return out;
}

std::vector<int> reader_counts(const CapturedGraph& g) {
  std::vector<int> readers(static_cast<size_t>(g.num_slots), 0);
  for (const GraphOp& op : g.ops) {
    for (int s : slots_read(op)) ++readers[static_cast<size_t>(s)];
  }
  for (int s : g.outputs) ++readers[static_cast<size_t>(s)];
  return readers;
}

c10::IValue example_value(const PassContext& ctx, const Arg& a) {
  if (a.kind == Arg::Kind::Slot) return ctx.examples[static_cast<size_t>(a.slot)];
  return a.kind == Arg::Kind::Constant ? a.constant : c10::IValue();
}

bool replace_uses(CapturedGraph& g, int from, const Arg& to) {
  bool is_output = std::find(g.outputs.begin(), g.outputs.end(), from) != g.outputs.end();
  if (is_output && to.kind != Arg::Kind::Slot) return false;
  for (auto& op : g.ops) {
    for (auto& a : op.args) replace_in(a, from, to);
  }
  for (int& o : g.outputs) {
    if (o == from) o = to.slot;
  }
  return true;
}

void erase_ops(CapturedGraph& g, const std::vector<bool>& dead) {
  std::vector<GraphOp> kept;
  kept.reserve(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (!dead[i]) kept.push_back(std::move(g.ops[i]));
  }
  g.ops = std::move(kept);
}

}  // namespace tcprof
