// The parts of a training step that `tcprof train` and `tcprof bench --train` share, so both
// measure the same step: the loss on a seeded synthetic target and the optimizer step (one fused
// kernel under the cpp and cuda backends, torch::optim under eager).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <ATen/core/ivalue.h>

#include "compiler/runtime/compiled_module.h"
#include "compiler/runtime/input_spec.h"

namespace tcprof::cli {

struct LossOptions {
  std::string loss = "mse";  // mse | cross_entropy | model (forward returns the loss; no target)
  InputSpec target;          // dtype and value range; sizes follow the output
  uint64_t seed = 0;
};

// Throws Error(Usage) for an unknown loss or optimizer, a --target that is not a tensor spec, or
// a --target missing (mse, cross_entropy) or given (model).
LossOptions parse_loss_options(const std::string& loss, const std::string& target, uint64_t seed);

// The model output the loss is computed on: the output, or the first tensor of a tuple or list.
at::Tensor first_tensor(const c10::IValue& v);
// The loss of `out` against batch `batch`'s target (seeded like the inputs).
at::Tensor compute_loss(const LossOptions& o, const at::Tensor& out, int64_t batch);

struct OptimizerStep {
  std::string name;         // "fused adam" | "fused adam (tcprof CUDA)" | "fused adam (LibTorch)" | "torch::optim adam" ...
  std::string description;  // "fused adam over 53 parameters, 3.49 M elements: lr 0.001, ..."
  std::string code;         // the generated kernel's source; empty for torch::optim
  std::function<void()> zero_grad, step;
};
struct OptimizerChoice {
  std::string kind = "sgd";  // sgd | adam | adamw
  double lr = 0.01;
  double weight_decay = -1;  // < 0: the optimizer's default (adamw 0.01, as PyTorch's; else 0)
  double momentum = 0;       // sgd
};
// --optimizer, --lr, --weight-decay, --momentum on `cmd` (`prefix` starts each help text).
void add_optimizer_options(CLI::App* cmd, OptimizerChoice& o, const std::string& prefix);
// Throws Error(Usage) for an unknown optimizer, a learning rate that is not positive, a negative
// momentum, or momentum for an optimizer other than sgd.
void check_optimizer(const OptimizerChoice& o);

// `fused`: the generated kernel over all parameters (compiler/optim) where the parameters allow
// it (CPU float32); on a GPU tcprof's CUDA kernel (float32), else LibTorch's fused multi-tensor
// kernels where the linked LibTorch has them; torch::optim's otherwise, or when not `fused`.
OptimizerStep make_optimizer(const OptimizerChoice& o, std::vector<at::Tensor> params, bool fused);

// The kernels an optimizer step can take, for make_optimizer's choice and for bench --train's
// side-by-side of them on the same parameters.
enum class OptimizerKernel { Generated, TcprofCuda, LibTorch, TorchOptim };
// "" when `kernel` can step `params`, else why not (the kernel's own reason).
std::string why_optimizer_cannot_run(OptimizerKernel kernel, const std::vector<at::Tensor>& params);
// The step through `kernel`; throws Error when it cannot take `params` or cannot be built.
OptimizerStep make_optimizer_with(OptimizerKernel kernel, const OptimizerChoice& o, std::vector<at::Tensor> params);

// Where the backward ran: "compiled forward and backward for 1 of 1 graph", with the first reason
// a graph's backward runs through LibTorch; or LibTorch autograd under another backend.
std::string backward_note(const CompiledModule& m, const std::string& backend);

}  // namespace tcprof::cli
