// Symbolic shape rules: the size of an op's output as expressions over the frame's inputs, so a
// graph stays valid when a dimension is dynamic. Each rule's answer is checked against the real
// output of the capture run; an op without a rule (or a rule that disagrees) gives static sizes
// when nothing dynamic flows in, and unknown sizes (null) otherwise.
#pragma once
#include <vector>

#include <ATen/core/Tensor.h>

#include "compiler/frontend/capture_value.h"

namespace torch::jit {
struct Node;
}

namespace tcprof {

std::vector<SymExprPtr> output_sizes(const torch::jit::Node* node, const std::vector<VarPtr>& inputs,
                                     const at::Tensor& result, const SymBindings& bindings);

}  // namespace tcprof
