#include "compiler/optim/libtorch_fused_optimizer.h"

#include <c10/core/GradMode.h>
#include <fmt/format.h>

#include "compiler/torch_compat.h"
#include "core/error.h"

#define TCPROF_LIBTORCH_FUSED_OPTIMIZERS TCPROF_TORCH_AT_LEAST(2, 4)

namespace tcprof {

std::string LibTorchFusedOptimizer::unsupported_reason(const std::vector<at::Tensor>& params) {
#if !TCPROF_LIBTORCH_FUSED_OPTIMIZERS
  (void)params;
  return fmt::format("LibTorch {} has no fused optimizer kernels (2.4 or later has)", TORCH_VERSION);
#else
  if (params.empty()) return "there are no parameters";
  const at::Tensor& first = params.front();
  for (const auto& p : params) {
    if (p.device() != first.device()) {
      return fmt::format("parameters are on {} and {}", first.device().str(), p.device().str());
    }
    if (p.scalar_type() != first.scalar_type()) {
      return fmt::format("parameters are {} and {}", c10::toString(first.scalar_type()), c10::toString(p.scalar_type()));
    }
  }
  const auto t = first.scalar_type();
  if (t != at::kFloat && t != at::kHalf && t != at::kBFloat16 && t != at::kDouble) {
    return fmt::format("parameters are {}", c10::toString(t));
  }
  if (!first.device().is_cuda() && !first.device().is_cpu()) return fmt::format("parameters are on {}", first.device().str());
  return shared_parameter_memory(params);
#endif
}

LibTorchFusedOptimizer::LibTorchFusedOptimizer(std::vector<at::Tensor> params, FusedOptimizerOptions options)
    : params_(std::move(params)), options_(std::move(options)) {
  check_fused_optimizer_kind(options_.kind);
  std::string why = unsupported_reason(params_);
  if (!why.empty()) throw Error(ErrorKind::Usage, "LibTorch's fused optimizer step cannot run: " + why);
  const bool adam = options_.kind != "sgd";
  for (const auto& p : params_) {
    if (adam) {
      state1_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
      state2_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
      steps_.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
    } else if (options_.momentum != 0) {
      state1_.push_back(at::empty_like(p, at::MemoryFormat::Preserve));
    }
  }
  started_.assign(params_.size(), false);
}

const char* LibTorchFusedOptimizer::kernel_name() const {
  return options_.kind == "adam" ? "_fused_adam_" : options_.kind == "adamw" ? "_fused_adamw_" : "_fused_sgd_";
}

std::string LibTorchFusedOptimizer::describe() const {
  const std::string where = params_.empty() ? "" : fmt::format(" on {} (LibTorch {})", params_.front().device().str(), kernel_name());
  return describe_optimizer_step(options_, params_, where);
}

void LibTorchFusedOptimizer::zero_grad() {
  for (auto& p : params_) p.mutable_grad().reset();
}

void LibTorchFusedOptimizer::step() {
#if TCPROF_LIBTORCH_FUSED_OPTIMIZERS
  c10::NoGradGuard no_grad;  // the kernels update leaf tensors that require grad
  const FusedOptimizerOptions& o = options_;
  std::vector<at::Tensor> p, g, m, v, t, first_p, first_g, first_m;
  for (size_t i = 0; i < params_.size(); ++i) {
    const at::Tensor& grad = params_[i].grad();
    if (!grad.defined()) continue;  // as torch::optim: no gradient, no step (and no step count)
    if (o.kind != "sgd") {
      p.push_back(params_[i]), g.push_back(grad), m.push_back(state1_[i]), v.push_back(state2_[i]), t.push_back(steps_[i]);
    } else if (o.momentum != 0 && !started_[i]) {  // its buffer starts as the gradient (is_first_step)
      first_p.push_back(params_[i]), first_g.push_back(grad), first_m.push_back(state1_[i]);
      started_[i] = true;
    } else {
      p.push_back(params_[i]), g.push_back(grad);
      if (o.momentum != 0) m.push_back(state1_[i]);
    }
  }
  if (o.kind != "sgd") {
    if (p.empty()) return;
    // The kernels read the step count already advanced, as PyTorch's optimizer advances it first.
    at::_foreach_add_(t, 1);
    if (o.kind == "adam") {
      at::_fused_adam_(p, g, m, v, {}, t, o.lr, o.beta1, o.beta2, o.weight_decay, o.eps, false, false);
    } else {
      at::_fused_adamw_(p, g, m, v, {}, t, o.lr, o.beta1, o.beta2, o.weight_decay, o.eps, false, false);
    }
    return;
  }
  if (!first_p.empty()) {
    at::_fused_sgd_(first_p, first_g, first_m, o.weight_decay, o.momentum, o.lr, 0.0, false, false, true);
  }
  if (!p.empty()) at::_fused_sgd_(p, g, m, o.weight_decay, o.momentum, o.lr, 0.0, false, false, false);
#endif
}

}  // namespace tcprof
