// Training graphs at run time, torch.autograd.Function's part in AOTAutograd: the compiled forward
// runs without recording anything, and one autograd node per call holds the saved values and runs
// the compiled backward when autograd reaches it. User code, losses and optimizers see ordinary
// tensors whose grad_fn is that node ("tcprof::CompiledBackward").
#pragma once
#include <memory>
#include <vector>

#include <ATen/ATen.h>

#include "compiler/autodiff/joint_graph.h"
#include "compiler/backends/backend.h"

namespace tcprof {

// `forward` runs plan.forward (the graph's inputs, then `parameters`), `backward` plan.backward.
// `report` describes both. With grad mode off, or nothing requiring grad, a call runs the forward
// only and records nothing for autograd.
std::unique_ptr<CompiledGraph> make_autograd_graph(TrainingGraphs plan, std::vector<at::Tensor> parameters,
                                                   std::shared_ptr<CompiledGraph> forward,
                                                   std::shared_ptr<CompiledGraph> backward, CompileReport report);

}  // namespace tcprof
