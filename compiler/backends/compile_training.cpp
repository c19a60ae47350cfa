#include "compiler/backends/compile_training.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <fmt/format.h>

#include "compiler/autodiff/autograd_graph.h"
#include "compiler/autodiff/joint_graph.h"
#include "compiler/backends/compile_steps.h"
#include "compiler/backends/cpp/passes/graph_passes.h"
#include "compiler/frontend/guards.h"
#include "compiler/runtime/autocast.h"

namespace tcprof {
namespace {

// One report for a training graph: the joint and partition phases, then the forward's phases and
// the backward's (named backward_codegen, backward_cc, ...), kernels and hints of both.
void merge_training_reports(CompileReport& r, const TrainingGraphs& plan, const CompileReport& fwd, const CompileReport& bwd) {
  for (const auto& p : fwd.phases) r.phases.push_back(p);
  for (auto p : bwd.phases) {
    p.name = "backward_" + p.name;
    r.phases.push_back(p);
  }
  r.ir = plan.summary() + "# forward\n" + fwd.ir + "\n# backward\n" + bwd.ir;
  r.code = fwd.code + bwd.code;
  for (const auto* part : {&fwd, &bwd}) {
    for (const auto& h : part->hints) r.hints.push_back(h);
    r.kernels += part->kernels;
    r.unique_kernels += part->unique_kernels;
    r.window_kernels += part->window_kernels;
    r.fused_ops += part->fused_ops;
    r.extern_calls += part->extern_calls;
    r.fallback_calls += part->fallback_calls;
    for (const auto& k : part->kernel_groups) r.kernel_groups.push_back((part == &bwd ? "bwd " : "") + k);
    for (auto d : part->autotune) {
      if (part == &bwd) d.text = "bwd " + d.text;
      r.autotune.push_back(std::move(d));
    }
  }
  r.cache_hit = fwd.cache_hit && bwd.cache_hit;
  r.compile_failed = fwd.compile_failed || bwd.compile_failed;
  r.failure = fwd.failure + bwd.failure;
  TrainingReport t;
  t.saved_bytes = plan.saved_bytes;
  t.saved_activations = plan.saved_activations();
  t.saved_inputs = static_cast<int>(plan.saved_inputs.size()) - t.saved_activations;
  t.recomputed = plan.recomputed;
  t.backward_ops = static_cast<int>(plan.backward.ops.size());
  t.gradients = static_cast<int>(plan.grad_inputs.size());
  t.forward_kernels = fwd.kernels + fwd.window_kernels;
  t.backward_kernels = bwd.kernels + bwd.window_kernels;
  r.training = t;
  r.parts.push_back({"aot_forward", static_cast<int>(plan.forward.op_count()), fwd.ir, fwd.compile_failed ? fwd.failure : fwd.code});
  r.parts.push_back({"aot_backward", static_cast<int>(plan.backward.op_count()), bwd.ir, bwd.compile_failed ? bwd.failure : bwd.code});
}

}  // namespace

std::unique_ptr<CompiledGraph> compile_training(const CapturedGraph& captured, const std::vector<c10::IValue>& inputs,
                                                c10::DeviceType device, const InferenceCompile& compile_inference,
                                                std::string* why_not) {
  if (autocast_enabled(device)) {
    *why_not = "autocast is on (mixed-precision training runs eagerly)";
    return nullptr;
  }
  CompileReport report;
  Phases phase(report);
  phase.begin("joint");
  std::vector<at::Tensor> parameters;
  CapturedGraph g = lift_parameters(captured, &parameters);
  g.capture_values.reset();  // parameters became inputs: other slot numbers
  std::vector<c10::IValue> all = inputs;
  std::vector<bool> differentiable;
  for (const auto& v : inputs) {
    differentiable.push_back(v.isTensor() && v.toTensor().requires_grad() && v.toTensor().is_floating_point());
  }
  for (const auto& p : parameters) {
    all.emplace_back(p);
    differentiable.push_back(p.is_floating_point());
  }
  at::NoGradGuard no_grad;  // from here on nothing is recorded; the compiled graphs run without autograd
  std::vector<c10::IValue> examples = example_run(g, all);
  InputBindings bindings(all);
  PassContext ctx{g, examples, bindings};
  simplify_graph(ctx);
  functionalize_inplace(ctx);
  std::optional<JointGraph> joint = build_joint_graph(g, examples, differentiable, why_not);
  if (!joint) return nullptr;
  phase.begin("partition");
  TrainingGraphs plan = partition_joint_graph(std::move(*joint), examples);
  phase.end();
  std::shared_ptr<CompiledGraph> forward = compile_inference(plan.forward, all);
  std::shared_ptr<CompiledGraph> backward = compile_inference(plan.backward, plan.backward_examples);
  merge_training_reports(report, plan, forward->report(), backward->report());
  return make_autograd_graph(std::move(plan), std::move(parameters), std::move(forward), std::move(backward),
                             std::move(report));
}

std::string eager_training_reason(const std::string& why_eager, const std::string& why_not) {
  return fmt::format("{} and the compiled backward does not cover it: {}",
                     why_eager == "an input requires grad" ? "an input requires grad" : "training", why_not);
}

}  // namespace tcprof
