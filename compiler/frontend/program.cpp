#include "compiler/frontend/program.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

namespace tcprof {

using torch::jit::Block;
using torch::jit::Node;

Program::Program(torch::jit::Module module, const std::string& method)
    : module_(std::move(module)), method_(method) {
  root_ = module_.get_method(method).graph();
  index_graph(*root_);
}

void Program::index_graph(const torch::jit::Graph& graph) {
  if (indexed_[&graph]) return;
  indexed_[&graph] = true;
  size_t counter = 0;
  index_block(graph.block(), counter);
}

void Program::index_block(const Block* block, size_t& counter) {
  auto& list = block_nodes_[block];
  for (Node* n : const_cast<Block*>(block)->nodes()) {
    list.push_back(n);
    positions_[n] = counter++;
    for (const Block* b : n->blocks()) index_block(b, counter);
  }
  positions_[block->return_node()] = counter++;
}

const std::vector<Node*>& Program::nodes(const Block* block) { return block_nodes_.at(block); }

size_t Program::position(const Node* node) { return positions_.at(node); }

std::shared_ptr<torch::jit::Graph> Program::method_graph(const c10::ClassTypePtr& type,
                                                         const std::string& name) {
  auto& fn = type->getMethod(name);
  auto graph = torch::jit::toGraphFunction(fn).graph();
  index_graph(*graph);
  return graph;
}

std::shared_ptr<torch::jit::Graph> Program::function_graph(const Node* call) {
  auto fn_type = call->input(0)->type()->expect<c10::FunctionType>();
  auto graph = torch::jit::toGraphFunction(*fn_type->function()).graph();
  index_graph(*graph);
  return graph;
}

bool is_inside(const Node* node, const Node* loop) {
  for (const Block* b = node->owningBlock(); b && b->owningNode(); b = b->owningNode()->owningBlock()) {
    if (b->owningNode() == loop) return true;
  }
  return false;
}

bool Program::live_at(const torch::jit::Value* value, size_t resume_position,
                      const std::vector<const Node*>& enclosing_loops) {
  for (const auto& use : value->uses()) {
    if (positions_.at(use.user) >= resume_position) return true;
    // A later iteration of an enclosing loop runs the use again, unless the value is itself
    // defined inside that loop (then each iteration defines it anew).
    for (const Node* loop : enclosing_loops) {
      if (is_inside(use.user, loop) && !is_inside(value->node(), loop)) return true;
    }
  }
  return false;
}

}  // namespace tcprof
