// Optimizer steps as one generated kernel over every parameter (horizontal fusion).
//
// torch::optim::Adam updates each parameter with five or six LibTorch ops, each a full pass over
// the parameter or its state; the step is memory-bound, so those passes are its cost. Here one
// loop reads each parameter, gradient and state element once and writes them once, for all
// parameters in one parallel launch. The kernel is compiled through the kernel cache (CPU ISA
// flags, OpenMP) once per process and machine, whatever the parameter set.
//
// Results follow torch::optim's formulas (PyTorch's Adam with L2 weight decay, AdamW with decoupled
// weight decay, SGD with momentum and dampening 0); they agree to float rounding (tests: relative
// 1e-5 after several steps).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "compiler/toolchain/kernel_library.h"

namespace tcprof {

struct FusedOptimizerOptions {
  std::string kind = "adam";  // adam | adamw | sgd
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam
  double momentum = 0;                           // sgd
  double weight_decay = 0;  // adam, sgd: L2, added to the gradient; adamw: decoupled (torch::optim's)
};

// "" when no two parameters share memory, else which two do (tied weights listed twice): a fused
// step updates every parameter at once, so two updates of one element would race, where
// torch::optim steps one after the other. Every fused step refuses them.
std::string shared_parameter_memory(const std::vector<at::Tensor>& params);

// Throws Error(Usage) unless `kind` is adam, adamw or sgd: every fused step's first check.
void check_fused_optimizer_kind(const std::string& kind);

// "adam over 53 parameters, 3.49 M elements{where}: lr 0.001, betas 0.9 0.999, eps 1e-08[, ...]":
// the one description of a fused step, whichever kernel takes it (`where` may be empty).
std::string describe_optimizer_step(const FusedOptimizerOptions& options, const std::vector<at::Tensor>& params,
                                    const std::string& where);

class FusedOptimizer {
 public:
  // Why `params` cannot take the fused step ("" when they can): CPU, float32, contiguous.
  static std::string unsupported_reason(const std::vector<at::Tensor>& params);

  // Throws Error(Usage) for an unknown kind, KernelLibraryError when the kernel cannot be built.
  FusedOptimizer(std::vector<at::Tensor> params, FusedOptimizerOptions options);

  // The generated kernel's source (the same for every parameter set) and a line describing this
  // step ("adam over 53 parameters, 3.49 M elements: lr 0.001, betas 0.9 0.999, eps 1e-08").
  static const std::string& source();
  std::string describe() const;

  // Drops the gradients, as PyTorch's zero_grad() (set_to_none, its default since 2.0) and
  // torch::optim's from 2.0: the next backward then hands its gradient over instead of adding it
  // to zeros (a pass over every gradient less, and none to zero them).
  void zero_grad();
  void step();       // parameters without a gradient are skipped, as in torch::optim
  int64_t steps() const { return step_; }

 private:
  using StepFn = void (*)(float* const*, const float* const*, float* const*, float* const*,
                          const int64_t*, int64_t, const double*, const double*);
  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> state1_, state2_;  // adam: exp_avg, exp_avg_sq; sgd: momentum buffer
  FusedOptimizerOptions options_;
  std::shared_ptr<LoadedLibrary> library_;
  StepFn step_fn_ = nullptr;
  int64_t step_ = 0;
  std::vector<int64_t> param_steps_;  // steps each parameter took (those with a gradient)
};

}  // namespace tcprof
