#include "cli/training_step.h"

#include <fmt/format.h>
#include <torch/optim.h>

#include "cli/text_format.h"
#include "compiler/backends/cuda/cuda_features.h"
#include "compiler/optim/cuda_fused_optimizer.h"
#include "compiler/optim/fused_optimizer.h"
#include "compiler/optim/libtorch_fused_optimizer.h"
#include "compiler/runtime/input_generator.h"
#include "core/error.h"

namespace tcprof::cli {
namespace {

// The target for one batch: the spec's dtype and value range, with each size the output dictates
// (so --vary on an input carries over to the target). Seeded per batch like the inputs.
at::Tensor make_target(const InputSpec& spec, const std::vector<int64_t>& sizes, uint64_t seed, int64_t batch) {
  InputSpec s = spec;
  s.sizes = sizes;
  return InputGenerator({s}, {}, seed ^ 0x7461726765747331ULL).make(batch)[0].toTensor();  // on the CPU
}

}  // namespace

LossOptions parse_loss_options(const std::string& loss, const std::string& target, uint64_t seed) {
  if (loss != "mse" && loss != "cross_entropy" && loss != "model") {
    throw Error(ErrorKind::Usage, fmt::format("unknown --loss '{}' (use mse, cross_entropy, or model when forward "
                                              "returns the loss)", loss));
  }
  LossOptions o;
  o.loss = loss;
  o.seed = seed;
  if (loss == "model") {
    if (!target.empty()) {
      throw Error(ErrorKind::Usage, "--target is not used with --loss model: the model computes its loss from its inputs");
    }
    return o;
  }
  if (target.empty()) {
    throw Error(ErrorKind::Usage, fmt::format("--loss {} needs --target (like f32[8,10] for mse, i64[8](0,10) for "
                                              "cross_entropy); use --loss model when forward returns the loss", loss));
  }
  o.target = parse_input_spec(target);
  if (o.target.kind != InputSpec::Kind::Tensor) {
    throw Error(ErrorKind::Usage, fmt::format("--target {} must be a tensor spec such as f32[8,10] or i64[8](0,10)", target));
  }
  return o;
}

void add_optimizer_options(CLI::App* cmd, OptimizerChoice& o, const std::string& prefix) {
  cmd->add_option("--optimizer", o.kind, prefix + "sgd | adam | adamw")->capture_default_str();
  cmd->add_option("--lr", o.lr, prefix + "learning rate")->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay,
                  prefix + "weight decay: L2 for sgd and adam, decoupled for adamw (default 0; adamw 0.01)");
  cmd->add_option("--momentum", o.momentum, prefix + "sgd momentum")->capture_default_str();
}

void check_optimizer(const OptimizerChoice& o) {
  if (o.kind != "sgd" && o.kind != "adam" && o.kind != "adamw") {
    throw Error(ErrorKind::Usage, fmt::format("unknown --optimizer '{}' (use sgd, adam or adamw)", o.kind));
  }
  if (o.lr <= 0) throw Error(ErrorKind::Usage, "--lr must be positive");
  if (o.momentum < 0) throw Error(ErrorKind::Usage, "--momentum must not be negative");
  if (o.momentum != 0 && o.kind != "sgd") throw Error(ErrorKind::Usage, "--momentum is for --optimizer sgd");
}

at::Tensor first_tensor(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor();
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) {
      if (e.isTensor()) return e.toTensor();
    }
  }
  if (v.isList()) {
    for (const auto& e : v.toListRef()) {
      if (e.isTensor()) return e.toTensor();
    }
  }
  throw Error(ErrorKind::Input, "train: the model returns no tensor to compute a loss on");
}

at::Tensor compute_loss(const LossOptions& o, const at::Tensor& out, int64_t batch) {
  if (o.loss == "model") {  // forward returned its loss (alone, or first as in (loss, logits))
    if (out.numel() != 1) {
      throw Error(ErrorKind::Usage, fmt::format("--loss model: the model's first output must be its scalar loss; it is "
                                                "[{}] (give --loss and --target to compute one)", fmt::join(out.sizes(), ",")));
    }
    return out.reshape({});
  }
  const InputSpec& target_spec = o.target;
  std::vector<int64_t> out_sizes(out.sizes().begin(), out.sizes().end());
  if (o.loss == "mse") {
    if (target_spec.sizes.size() != out_sizes.size()) {
      throw Error(ErrorKind::Usage, fmt::format("--target {} has rank {}, the output [{}] rank {} (mse compares "
                                                "tensors of the output's shape)", target_spec.text,
                                                target_spec.sizes.size(), fmt::join(out_sizes, ","), out_sizes.size()));
    }
    at::Tensor target = make_target(target_spec, out_sizes, o.seed, batch).to(out.device(), out.scalar_type());
    return at::mse_loss(out, target);
  }
  // cross_entropy: output [N, C] with target [N], or [B, T, C] with target [B, T] (sequence
  // models), flattened to [B*T, C] and [B*T].
  if (out_sizes.size() < 2 || target_spec.sizes.size() + 1 != out_sizes.size()) {
    throw Error(ErrorKind::Usage, fmt::format("--target {} must have one dimension fewer than the output [{}] "
                                              "for cross_entropy (class indices)", target_spec.text,
                                              fmt::join(out_sizes, ",")));
  }
  std::vector<int64_t> target_sizes(out_sizes.begin(), out_sizes.end() - 1);
  at::Tensor target = make_target(target_spec, target_sizes, o.seed, batch).to(out.device(), at::kLong);
  int64_t classes = out_sizes.back();
  return at::cross_entropy_loss(out.reshape({-1, classes}), target.reshape({-1}));
}

namespace {

FusedOptimizerOptions fused_options(const OptimizerChoice& o) {
  FusedOptimizerOptions f;
  f.kind = o.kind;
  f.lr = o.lr;
  f.weight_decay = o.weight_decay >= 0 ? o.weight_decay : (o.kind == "adamw" ? 0.01 : 0.0);
  f.momentum = o.momentum;
  return f;
}

// LibTorch's messages carry a C++ backtrace after their first line.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

template <typename Step>
OptimizerStep step_of(std::shared_ptr<Step> step, std::string name, std::string description, std::string code) {
  return {std::move(name), std::move(description), std::move(code), [step] { step->zero_grad(); }, [step] { step->step(); }};
}

}  // namespace

std::string why_optimizer_cannot_run(OptimizerKernel kernel, const std::vector<at::Tensor>& params) {
  switch (kernel) {
    case OptimizerKernel::Generated: return FusedOptimizer::unsupported_reason(params);
    case OptimizerKernel::TcprofCuda:
      if (params.empty() || !params.front().is_cuda()) return "the parameters are not on a GPU";
      return CudaFusedOptimizer::unsupported_reason(params);
    case OptimizerKernel::LibTorch: return LibTorchFusedOptimizer::unsupported_reason(params);
    case OptimizerKernel::TorchOptim: return "";
  }
  return "";
}

OptimizerStep make_optimizer_with(OptimizerKernel kernel, const OptimizerChoice& o, std::vector<at::Tensor> params) {
  check_optimizer(o);
  const FusedOptimizerOptions f = fused_options(o);
  switch (kernel) {
    case OptimizerKernel::Generated: {
      auto step = std::make_shared<FusedOptimizer>(params, f);
      return step_of(step, "fused " + o.kind, "fused " + step->describe(), FusedOptimizer::source());
    }
    case OptimizerKernel::TcprofCuda: {
      auto step = std::make_shared<CudaFusedOptimizer>(params, f);
      return step_of(step, "fused " + o.kind + " (tcprof CUDA)", "fused " + step->describe(), CudaFusedOptimizer::source());
    }
    case OptimizerKernel::LibTorch: {
      auto step = std::make_shared<LibTorchFusedOptimizer>(params, f);
      return step_of(step, "fused " + o.kind + " (LibTorch)", "fused " + step->describe(), "");
    }
    case OptimizerKernel::TorchOptim: break;
  }
  std::shared_ptr<torch::optim::Optimizer> opt;
  const double wd = f.weight_decay;
  if (o.kind == "sgd") {
    opt = std::make_shared<torch::optim::SGD>(params, torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(wd));
  } else if (o.kind == "adam") {
    opt = std::make_shared<torch::optim::Adam>(params, torch::optim::AdamOptions(o.lr).weight_decay(wd));
  } else {
    opt = std::make_shared<torch::optim::AdamW>(params, torch::optim::AdamWOptions(o.lr).weight_decay(wd));
  }
  int64_t elements = 0;
  for (const auto& p : params) elements += p.numel();
  std::string description = fmt::format("torch::optim {} over {} parameters, {:.2f} M elements: lr {}, weight decay {}",
                                        o.kind, params.size(), static_cast<double>(elements) / 1e6, o.lr, wd);
  return {"torch::optim " + o.kind, description, "", [opt] { opt->zero_grad(); }, [opt] { opt->step(); }};
}

OptimizerStep make_optimizer(const OptimizerChoice& o, std::vector<at::Tensor> params, bool fused) {
  check_optimizer(o);
  if (!fused) return make_optimizer_with(OptimizerKernel::TorchOptim, o, std::move(params));
  if (why_optimizer_cannot_run(OptimizerKernel::Generated, params).empty()) {
    return make_optimizer_with(OptimizerKernel::Generated, o, std::move(params));
  }
  // Parameters on a GPU: tcprof's CUDA kernel, one launch for the whole step; LibTorch's
  // multi-tensor fused kernels where it cannot run (not float32, no NVRTC or driver) or where
  // TCPROF_CUDA_OFF=optimizer-kernel turns it off for an A/B.
  std::string why_not_ours;
  if (cuda_features_from_env().optimizer_kernel && why_optimizer_cannot_run(OptimizerKernel::TcprofCuda, params).empty()) {
    try {
      return make_optimizer_with(OptimizerKernel::TcprofCuda, o, params);
    } catch (const std::exception& e) {  // tcprof's errors and LibTorch's (no memory for the state)
      why_not_ours = fmt::format(" (tcprof's CUDA kernel could not be built: {})", first_line(e.what()));
    }
  }
  OptimizerKernel kernel = why_optimizer_cannot_run(OptimizerKernel::LibTorch, params).empty() ? OptimizerKernel::LibTorch
                                                                                                : OptimizerKernel::TorchOptim;
  OptimizerStep step = make_optimizer_with(kernel, o, std::move(params));
  step.description += why_not_ours;
  return step;
}

std::string backward_note(const CompiledModule& m, const std::string& backend) {
  if (backend == "eager") return "backward runs through LibTorch autograd (--backend eager)";
  int compiled = 0, total = 0;
  std::string why;
  for (const auto& f : m.frames()) {
    for (const auto& e : f->entries) {
      ++total;
      const CompileReport& r = e->compiled->report();
      if (r.ir.rfind("# training:", 0) == 0) ++compiled;
      for (const auto& h : r.hints) {
        if (h.kind == "autograd" && why.empty()) why = h.message;
      }
    }
  }
  std::string note = fmt::format("compiled forward and backward for {} of {}", compiled, text::plural(total, "graph", "graphs"));
  return why.empty() ? note : note + "; " + why;
}

}  // namespace tcprof::cli
