// The training graphs of a captured graph, AOTAutograd's job for torch.compile: parameters lifted
// to inputs, the joint forward/backward graph built from the derivative rules, and its partition
// into a forward graph that also returns what the backward reads, and a backward graph.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "compiler/ir/captured_graph.h"

namespace tcprof {

// A parameter that requires grad anywhere in an argument: a tensor constant, an item of a list
// argument, or an item of a constant list (`torch.cat([self.p, self.p])` is captured as one
// constant). Whether a graph trains (compile_steps.h, autograd_reason) asks this; lifting splits
// such lists.
bool holds_parameter_requiring_grad(const Arg& a);

// Parameters (constant tensors that require grad) become inputs after the graph's own, so the
// compiled graphs read their current values every step and gradients reach them.
CapturedGraph lift_parameters(const CapturedGraph& g, std::vector<at::Tensor>* parameters);

// The forward ops and, in the same slot numbering, the backward ops: slots up to
// `forward.num_slots` are the forward's, then one gradient input per differentiable output, then
// the backward's own.
struct JointGraph {
  CapturedGraph forward;
  CapturedGraph backward;              // ops only; its slots continue the forward's
  std::vector<int> grad_output_slots;  // per differentiable graph output
  std::vector<int> grad_outputs;       // ... the index of that output in forward.outputs
  std::vector<int> grad_inputs;        // per input gradient: the forward input
  std::vector<int> grad_input_slots;   // ... and its slot
};

// `examples`: every slot's value in an example run; `differentiable[i]`: input i requires grad.
// Returns nullopt with the reason in `why_not` (an op without a derivative rule and its line,
// dynamic shapes) when the graph cannot be differentiated here.
std::optional<JointGraph> build_joint_graph(const CapturedGraph& g, const std::vector<c10::IValue>& examples,
                                            const std::vector<bool>& differentiable, std::string* why_not);

struct TrainingGraphs {
  // inputs: the graph's (parameters lifted); outputs: the graph's, then the saved values.
  CapturedGraph forward;
  // inputs: the saved values, then the gradients of the differentiable outputs; outputs: the
  // gradients of the differentiable inputs that receive one.
  CapturedGraph backward;
  size_t graph_outputs = 0;
  std::vector<int> saved_inputs;  // per saved value: the forward input it is, or -1 (a forward output)
  std::vector<int> grad_outputs;  // per gradient input of the backward: the forward output it belongs to
  std::vector<int> grad_inputs;   // per backward output: the forward input it is the gradient of
  int64_t saved_bytes = 0;        // activations the backward keeps (saved values that are not inputs)
  std::vector<std::string> recomputed;  // forward ops the backward runs again (op names, in order)
  std::vector<c10::IValue> backward_examples;
  int saved_activations() const;        // saved values that are forward outputs, not inputs
  std::string recomputed_text() const;  // "aten::gelu x4, aten::mul x1", or "nothing"
  std::string summary() const;          // one line for the compile report
};

// The partition rule: the backward saves every forward value its ops read, except activations of
// cheap pointwise ops (activations, arithmetic) whose arguments it has anyway, that are no larger,
// and that only pointwise or row ops of the backward read (so the recomputation fuses into their
// kernels): those it recomputes, chains included. GEMM, convolution and reduction outputs, and
// anything a GEMM or convolution of the backward reads, are saved, and so is everything when the
// forward keeps an in-place op (recomputing would give a value before its change). The rules
// themselves recompute layer norm's statistics and max pooling's indices from the
// saved input. `examples` as for build_joint_graph.
TrainingGraphs partition_joint_graph(JointGraph joint, const std::vector<c10::IValue>& examples);

}  // namespace tcprof
