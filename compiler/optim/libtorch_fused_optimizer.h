// Optimizer steps through LibTorch's own multi-tensor fused kernels (_fused_adam_, _fused_adamw_,
// _fused_sgd_): the step for parameters on a GPU, where the generated CPU kernel of
// fused_optimizer.h cannot run. One launch updates every parameter with its gradient and state, so
// the step moves each element once instead of once per op of torch::optim (six passes for Adam).
//
// Available with LibTorch 2.4 or later (CUDA since 2.0, CPU kernels and _fused_sgd_ from 2.4);
// unsupported_reason() says why not elsewhere. Results follow torch::optim's formulas (Adam with L2
// weight decay, AdamW decoupled, SGD with momentum and dampening 0); tests compare over steps.
#pragma once
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "compiler/optim/fused_optimizer.h"

namespace tcprof {

class LibTorchFusedOptimizer {
 public:
  // Why `params` cannot take this step ("" when they can): the LibTorch version, parameters on
  // several devices or of several dtypes, or a dtype the fused kernels do not take.
  static std::string unsupported_reason(const std::vector<at::Tensor>& params);

  // Throws Error(Usage) for an unknown kind or parameters unsupported_reason() refuses.
  LibTorchFusedOptimizer(std::vector<at::Tensor> params, FusedOptimizerOptions options);

  // "adam over 53 parameters, 3.49 M elements on cuda:0 (LibTorch _fused_adam_): lr 0.001, ..."
  std::string describe() const;
  const char* kernel_name() const;  // "_fused_adam_", "_fused_adamw_" or "_fused_sgd_"

  // Drops the gradients, as PyTorch's zero_grad() (set_to_none, its default since 2.0) and
  // torch::optim's from 2.0: the next backward then hands its gradient over instead of adding it
  // to zeros (a pass over every gradient less, and none to zero them).
  void zero_grad();
  void step();       // parameters without a gradient are skipped, as in torch::optim

 private:
  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> state1_, state2_;  // adam: exp_avg, exp_avg_sq; sgd: momentum buffer
  std::vector<at::Tensor> steps_;            // adam: each parameter's step count (f32 scalar on its device)
  std::vector<bool> started_;                // sgd: the momentum buffer holds a value
  FusedOptimizerOptions options_;
};

}  // namespace tcprof
