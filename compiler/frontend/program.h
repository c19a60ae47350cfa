// Program: read-only facts about the TorchScript graphs of a model that the interpreter needs
// again and again: nodes of each block as an indexable list, a pre-order position for every
// node (for liveness at a resume point), and the graph of a called method or function.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <torch/csrc/jit/api/module.h>

namespace tcprof {

class Program {
 public:
  Program(torch::jit::Module module, const std::string& method);

  const torch::jit::Module& module() const { return module_; }
  std::shared_ptr<torch::jit::Graph> root_graph() const { return root_; }
  const std::string& method_name() const { return method_; }

  const std::vector<torch::jit::Node*>& nodes(const torch::jit::Block* block);
  // Pre-order index of a node in its graph; a block's return node comes after its last node.
  size_t position(const torch::jit::Node* node);
  // The graph run by prim::CallMethod on `self_type` / prim::CallFunction.
  std::shared_ptr<torch::jit::Graph> method_graph(const c10::ClassTypePtr& type, const std::string& name);
  std::shared_ptr<torch::jit::Graph> function_graph(const torch::jit::Node* call_function);

  // Is `value` still needed when execution resumes at `resume_position` of its graph, given the
  // loops (outermost first) enclosing the resume point?
  bool live_at(const torch::jit::Value* value, size_t resume_position,
               const std::vector<const torch::jit::Node*>& enclosing_loops);

 private:
  void index_graph(const torch::jit::Graph& graph);
  void index_block(const torch::jit::Block* block, size_t& counter);

  torch::jit::Module module_;
  std::string method_;
  std::shared_ptr<torch::jit::Graph> root_;
  std::unordered_map<const torch::jit::Block*, std::vector<torch::jit::Node*>> block_nodes_;
  std::unordered_map<const torch::jit::Node*, size_t> positions_;
  std::unordered_map<const torch::jit::Graph*, bool> indexed_;
};

// True when `node` lies inside the body of `loop` (at any depth).
bool is_inside(const torch::jit::Node* node, const torch::jit::Node* loop);

}  // namespace tcprof
