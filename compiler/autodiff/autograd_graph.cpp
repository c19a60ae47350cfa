#include "compiler/autodiff/autograd_graph.h"

#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include "compiler/torch_compat_autograd.h"
#include "core/error.h"

namespace tcprof {
namespace {

struct Plan {
  TrainingGraphs graphs;
  std::vector<at::Tensor> parameters;
  std::shared_ptr<CompiledGraph> forward, backward;
};

// The autograd node of one call: its next edges are the call's inputs (parameters included), in
// order; its inputs are the gradients of the differentiable outputs.
class CompiledBackward : public torch::autograd::Node {
 public:
  CompiledBackward(std::shared_ptr<const Plan> plan, std::vector<c10::IValue> saved, int64_t graph_id)
      : plan_(std::move(plan)), saved_(std::move(saved)), graph_id_(graph_id) {}
  // Registers output `t` as this node's next input (its gradient arrives at apply's position k).
  void add_output(at::Tensor& t) {
    shapes_.push_back(t.sizes().vec());
    options_.push_back(t.options());
    torch::autograd::set_history(t, compat::owning_pointer(this));
  }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    if (released_) {
      throw Error(ErrorKind::Usage, "backward through a compiled graph a second time: its saved values were freed after "
                                    "the first backward (pass retain_graph=true to the first)");
    }
    std::vector<c10::IValue> in = saved_;
    for (size_t k = 0; k < grads.size(); ++k) {
      // Autograd passes no gradient for an output the loss does not use; the backward graph was
      // compiled for dense contiguous ones.
      in.emplace_back(grads[k].defined() ? grads[k].contiguous() : at::zeros(shapes_[k], options_[k]));
    }
    std::vector<c10::IValue> out;
    {
      at::NoGradGuard no_grad;
      out = plan_->backward->run(in, graph_id_);
    }
    torch::autograd::variable_list result(num_outputs());
    for (size_t j = 0; j < out.size(); ++j) {
      result[static_cast<size_t>(plan_->graphs.grad_inputs[j])] = out[j].toTensor();
    }
    return result;
  }
  void release_variables() override {
    saved_.clear();
    released_ = true;
  }
  std::string name() const override { return "tcprof::CompiledBackward"; }

 private:
  std::shared_ptr<const Plan> plan_;
  std::vector<c10::IValue> saved_;
  std::vector<std::vector<int64_t>> shapes_;
  std::vector<at::TensorOptions> options_;
  int64_t graph_id_;
  bool released_ = false;
};

class AutogradGraph : public CompiledGraph {
 public:
  AutogradGraph(std::shared_ptr<const Plan> plan, CompileReport report) : plan_(std::move(plan)) { report_ = std::move(report); }

  std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs, int64_t graph_id) override {
    const TrainingGraphs& g = plan_->graphs;
    std::vector<c10::IValue> all = inputs;
    for (const auto& p : plan_->parameters) all.emplace_back(p);
    torch::autograd::variable_list edges_of(all.size());
    bool record = false;
    for (size_t i = 0; i < all.size(); ++i) {
      if (!all[i].isTensor()) continue;
      edges_of[i] = all[i].toTensor();
      record = record || edges_of[i].requires_grad();
    }
    record = record && at::GradMode::is_enabled();
    // Each graph's kernels are attributed to its own row once the store has them (set_part_ids).
    const int64_t forward_id = part_ids_.size() == 2 ? part_ids_[0] : graph_id;
    const int64_t backward_id = part_ids_.size() == 2 ? part_ids_[1] : graph_id;
    std::vector<c10::IValue> out;
    {
      at::NoGradGuard no_grad;
      out = plan_->forward->run(all, forward_id);
    }
    std::vector<c10::IValue> saved;
    size_t next_output = g.graph_outputs;
    // Saved as data only: the backward runs without autograd. A saved forward output that is also
    // a graph output gets this node as its grad_fn below; kept with that history it would hold the
    // node that holds it, a cycle nothing frees (after a graph break in training, the value the
    // next graph reads is saved for this graph's backward too: every compiled graph leaked).
    for (int input : g.saved_inputs) {
      const c10::IValue& v = input >= 0 ? all[static_cast<size_t>(input)] : out[next_output++];
      saved.push_back(v.isTensor() && v.toTensor().defined() ? c10::IValue(v.toTensor().detach()) : v);
    }
    out.resize(g.graph_outputs);
    if (!record) return out;
    auto node = compat::make_autograd_node<CompiledBackward>(plan_, std::move(saved), backward_id);
    node->set_next_edges(torch::autograd::collect_next_edges(edges_of));
    for (int k : g.grad_outputs) {
      at::Tensor t = out[static_cast<size_t>(k)].toTensor();
      // An output that is an input, or a view of one, must not take over that tensor's history.
      for (const auto& e : edges_of) {
        if (e.defined() && t.is_alias_of(e)) {
          t = t.clone();
          break;
        }
      }
      node->add_output(t);
      out[static_cast<size_t>(k)] = t;
    }
    return out;
  }

 private:
  std::shared_ptr<const Plan> plan_;
};

}  // namespace

std::unique_ptr<CompiledGraph> make_autograd_graph(TrainingGraphs plan, std::vector<at::Tensor> parameters,
                                                   std::shared_ptr<CompiledGraph> forward,
                                                   std::shared_ptr<CompiledGraph> backward, CompileReport report) {
  auto p = std::make_shared<Plan>();
  p->graphs = std::move(plan);
  p->parameters = std::move(parameters);
  p->forward = std::move(forward);
  p->backward = std::move(backward);
  return std::make_unique<AutogradGraph>(std::move(p), std::move(report));
}

}  // namespace tcprof
