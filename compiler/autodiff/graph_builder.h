// Appending aten ops to a captured graph from C++: the derivative rules write the backward graph
// this way. Every op of a captured graph needs a TorchScript node (backends run extern ops through
// its operator), so the builder creates one per op in a TorchScript graph of its own, matched
// against the op's schemas as the TorchScript compiler matches a call, and hands that graph to the
// captured graph to keep (CapturedGraph::owned_nodes).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "compiler/ir/captured_graph.h"

namespace torch::jit {
struct Value;
}

namespace tcprof {

// A slot of the graph being built (as opposed to a constant).
struct Val {
  int slot = -1;
};

// One argument of an emitted op: a slot, a constant, or a list of tensor slots (for aten::cat).
struct BuildArg {
  BuildArg(Val v) : slot(v.slot) {}  // NOLINT: implicit on purpose, rules read as calls
  BuildArg(c10::IValue c) : constant(std::move(c)) {}  // NOLINT
  BuildArg(std::vector<Val> items) : list(std::move(items)), is_list(true) {}  // NOLINT
  BuildArg(int64_t i) : constant(i) {}  // NOLINT
  BuildArg(int i) : constant(static_cast<int64_t>(i)) {}  // NOLINT
  BuildArg(double d) : constant(d) {}  // NOLINT
  BuildArg(bool b) : constant(b) {}  // NOLINT
  BuildArg(std::vector<int64_t> ints) : constant(std::move(ints)) {}  // NOLINT
  BuildArg(const char* s) : constant(std::string(s)) {}  // NOLINT
  int slot = -1;
  c10::IValue constant;
  std::vector<Val> list;
  bool is_list = false;
  std::string keyword;  // set for a keyword-only argument (see kw)
};

// A keyword-only argument: kw("approximate", "tanh").
inline BuildArg kw(const char* name, BuildArg value) {
  value.keyword = name;
  return value;
}

class GraphBuilder {
 public:
  // `slot_types`: the TorchScript type of each existing slot that an emitted op may read.
  GraphBuilder(CapturedGraph& graph, std::vector<c10::TypePtr> slot_types);
  // Appends `name(args...)` (e.g. "aten::sum" with a dim list and keepdim: the overload is chosen
  // by the argument types; omitted trailing arguments take the schema's defaults) and returns its
  // output slots. Throws Error(Internal) when no overload accepts the arguments.
  std::vector<Val> emit(const std::string& name, const std::vector<BuildArg>& args, const GraphOp* origin = nullptr);
  Val emit1(const std::string& name, const std::vector<BuildArg>& args, const GraphOp* origin = nullptr) {
    return emit(name, args, origin).at(0);
  }

 private:
  torch::jit::Value* value_of(int slot);
  Arg arg_of(torch::jit::Value* v) const;

  CapturedGraph& graph_;
  std::vector<c10::TypePtr> types_;  // by slot
  std::map<int, torch::jit::Value*> values_;
  std::map<const torch::jit::Value*, int> slots_;
};

}  // namespace tcprof
