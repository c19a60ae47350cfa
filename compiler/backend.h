// The backend interface: turns a captured graph into something that runs. `eager` interprets the
// graph op by op through LibTorch; the C++ code-generating backend plugs in behind the same
// interface.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>
#include <ATen/core/operator_name.h>

#include "compiler/captured_graph.h"

namespace torch::jit {
struct Node;
}

namespace tcprof {

class CpuProfiler;

class CompiledGraph {
 public:
  virtual ~CompiledGraph() = default;
  // Runs with the frame's inputs; returns the values of graph.outputs. Each kernel launch is
  // timed through the profiler given at compile time, attributed to `graph_id`.
  virtual std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs, int64_t graph_id = 0) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // `profiler` may be null (no timing).
  virtual std::unique_ptr<CompiledGraph> compile(const CapturedGraph& graph, CpuProfiler* profiler) = 0;
};

std::unique_ptr<Backend> make_eager_backend();
// Known backend names for --backend; throws Error(Usage) for others.
std::unique_ptr<Backend> make_backend(const std::string& name);

// Runs a node's operator on `stack` (its inputs), leaving its outputs. Vararg operators (print,
// format) also take their input count on the stack, as LibTorch's interpreter passes it.
void run_node(const torch::jit::Node* node, torch::jit::Stack& stack);
torch::jit::Operation node_operation(const torch::jit::Node* node);
bool has_operation(const torch::jit::Node* node);
bool is_vararg(const torch::jit::Node* node);

// The value of a symbolic expression as the IValue TorchScript expects: bool or int.
c10::IValue sym_value(const SymExpr& e, int64_t value);

// Evaluates an op argument against the slots (and, for symbolic sizes, the frame's inputs).
c10::IValue evaluate_arg(const Arg& arg, const std::vector<c10::IValue>& slots, const SymBindings& bindings);

}  // namespace tcprof
