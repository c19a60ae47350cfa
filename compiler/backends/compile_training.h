// Training graphs compiled by a code-generating backend (cpp and cuda alike): a captured graph
// that needs autograd becomes a compiled forward and a compiled backward (compiler/autodiff), each
// compiled as the backend compiles an inference graph, and run under one autograd node per call.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <c10/core/DeviceType.h>

#include "compiler/backends/backend.h"

namespace tcprof {

// How the backend compiles one inference graph: the forward (the graph's inputs, then its lifted
// parameters) and the backward (its examples). Called with grad mode off.
using InferenceCompile =
    std::function<std::shared_ptr<CompiledGraph>(const CapturedGraph&, const std::vector<c10::IValue>&)>;

// Parameters lifted to inputs, the simplifying passes, the joint graph and its partition, then
// both graphs through `compile_inference` (on a GPU, autograd runs the backward on its device
// thread with the forward's profiler, while the calling thread waits in backward()), with one
// report for both (the forward's phases, then
// the backward's named backward_<phase>; the IR and code of both). Null, with the reason in
// `why_not`, when autocast is on for `device` (mixed-precision training runs eagerly), an op has
// no derivative rule, or the graph is outside what the joint graph handles.
std::unique_ptr<CompiledGraph> compile_training(const CapturedGraph& captured, const std::vector<c10::IValue>& inputs,
                                                c10::DeviceType device, const InferenceCompile& compile_inference,
                                                std::string* why_not);

// The hint's words for a training graph that runs eagerly: `why_eager` (autograd_reason's) and
// `why_not` (compile_training's).
std::string eager_training_reason(const std::string& why_eager, const std::string& why_not);

}  // namespace tcprof
