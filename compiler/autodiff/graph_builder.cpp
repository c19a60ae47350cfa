#include "compiler/autodiff/graph_builder.h"

#include <fmt/format.h>

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include "core/error.h"
#include "core/log.h"

namespace tcprof {

GraphBuilder::GraphBuilder(CapturedGraph& graph, std::vector<c10::TypePtr> slot_types)
    : graph_(graph), types_(std::move(slot_types)) {
  if (!graph_.owned_nodes) graph_.owned_nodes = std::make_shared<torch::jit::Graph>();
  types_.resize(static_cast<size_t>(graph_.num_slots));
}

torch::jit::Value* GraphBuilder::value_of(int slot) {
  auto it = values_.find(slot);
  if (it != values_.end()) return it->second;
  c10::TypePtr type = slot < static_cast<int>(types_.size()) ? types_[static_cast<size_t>(slot)] : nullptr;
  if (!type) throw Error(ErrorKind::Internal, fmt::format("graph builder: slot %{} has no known type", slot));
  // A slot read by the builder's ops but made elsewhere: an input of the builder's graph.
  torch::jit::Value* v = graph_.owned_nodes->addInput()->setType(type);
  values_[slot] = v;
  slots_[v] = slot;
  return v;
}

Arg GraphBuilder::arg_of(torch::jit::Value* v) const {
  Arg a;
  auto slot = slots_.find(v);
  if (slot != slots_.end()) {
    a.kind = Arg::Kind::Slot;
    a.slot = slot->second;
    return a;
  }
  torch::jit::Node* n = v->node();
  if (n->kind() == c10::prim::Constant) {
    a.constant = *torch::jit::toIValue(v);
    return a;
  }
  if (n->kind() == c10::prim::ListConstruct) {
    a.kind = Arg::Kind::List;
    a.element_type = v->type()->expect<c10::ListType>()->getElementType();
    for (torch::jit::Value* item : n->inputs()) a.items.push_back(arg_of(item));
    return a;
  }
  throw Error(ErrorKind::Internal, fmt::format("graph builder: unexpected {} in an argument", n->kind().toQualString()));
}

std::vector<Val> GraphBuilder::emit(const std::string& name, const std::vector<BuildArg>& args, const GraphOp* origin) {
  torch::jit::Graph& jit = *graph_.owned_nodes;
  std::vector<torch::jit::NamedValue> named, keywords;
  for (const BuildArg& a : args) {
    torch::jit::Value* v = nullptr;
    if (a.is_list) {
      std::vector<torch::jit::Value*> items;
      for (Val item : a.list) items.push_back(value_of(item.slot));
      v = jit.insertNode(jit.createList(c10::TensorType::get(), items))->output();
    } else if (a.slot >= 0) {
      v = value_of(a.slot);
    } else {
      v = jit.insertConstant(a.constant);
    }
    if (a.keyword.empty()) named.emplace_back(v);
    else keywords.emplace_back(a.keyword, v);
  }
  torch::jit::Value* result = nullptr;
  try {
    result = jit.insert(c10::Symbol::fromQualString(name), named, keywords);
  } catch (const std::exception& e) {
    // TorchScript's message lists every overload over many lines; the log keeps it, the error names the op.
    log(LogChannel::Passes, "graph builder: {}", e.what());
    throw Error(ErrorKind::Internal, fmt::format("graph builder: no overload of {} takes these arguments", name));
  }
  // Several results come back packed in a tuple; the op is the node that produced its items.
  torch::jit::Node* node = result->node();
  if (node->kind() == c10::prim::TupleConstruct && name != "prim::TupleConstruct") node = node->inputs()[0]->node();
  GraphOp op;
  op.node = node;
  op.name = name;
  for (torch::jit::Value* in : node->inputs()) op.args.push_back(arg_of(in));
  std::vector<Val> outs;
  for (torch::jit::Value* out : node->outputs()) {
    int slot = graph_.num_slots++;
    types_.push_back(out->type());
    values_[slot] = out;
    slots_[out] = slot;
    op.outputs.push_back(slot);
    outs.push_back({slot});
  }
  if (origin) {
    op.module_path = origin->module_path;
    op.loc = origin->loc;
  }
  graph_.ops.push_back(std::move(op));
  return outs;
}

}  // namespace tcprof
