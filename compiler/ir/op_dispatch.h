// Running one TorchScript node or captured-graph argument outside LibTorch's interpreter: the
// operation behind a node (with the instructions the interpreter handles itself, such as list and
// tuple construction, turned into operations) and the value of an op argument for one call.
// Shared by capture (which runs each node with real inputs) and every backend.
#pragma once
#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>

#include "compiler/ir/captured_graph.h"

namespace torch::jit {
struct Node;
}

namespace tcprof {

// Runs a node's operator on `stack` (its inputs), leaving its outputs. Vararg operators (print,
// format) also take their input count on the stack, as LibTorch's interpreter passes it.
void run_node(const torch::jit::Node* node, torch::jit::Stack& stack);
torch::jit::Operation node_operation(const torch::jit::Node* node);
bool has_operation(const torch::jit::Node* node);

// Runs a captured-graph op as it is *named*: passes may rename an op (functionalization turns
// `mul_` into `mul`) while its node stays the in-place one. Every backend and pass that executes
// a GraphOp goes through these, never through the node directly.
void run_op(const GraphOp& op, torch::jit::Stack& stack);
torch::jit::Operation op_operation(const GraphOp& op);
bool is_vararg(const torch::jit::Node* node);

// The value of a symbolic expression as the IValue TorchScript expects: bool or int.
c10::IValue sym_value(const SymExpr& e, int64_t value);

// Evaluates an op argument against the slots (and, for symbolic sizes, the frame's inputs).
c10::IValue evaluate_arg(const Arg& arg, const std::vector<c10::IValue>& slots, const SymBindings& bindings);

}  // namespace tcprof
