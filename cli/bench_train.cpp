#include "cli/bench_command.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "analysis/statistics.h"
#include "cli/training_step.h"
#include "compiler/runtime/compiled_module.h"
#include "compiler/runtime/device_timer.h"
#include "compiler/runtime/torch_info.h"
#include "core/clock.h"
#include "core/error.h"

namespace tcprof::cli {
namespace {

// One executor's training step on its own copy of the weights, with its optimizer timed apart.
struct Trainer {
  std::string name;
  LoadedModel model;
  std::vector<at::Tensor> params;
  OptimizerStep optimizer;
  std::function<c10::IValue(const std::vector<c10::IValue>&)> forward;
  std::vector<int64_t> step_ns, optimizer_ns;

  // On a GPU the step's and the optimizer's times are the device's (compiler/runtime/device_timer.h).
  int64_t device_now() const { return now_ns_after_device(params.empty() ? c10::Device(c10::kCPU) : params.front().device()); }

  double step(const std::vector<c10::IValue>& inputs, const LossOptions& loss_options, bool timed) {
    int64_t start = device_now();
    optimizer.zero_grad();
    at::Tensor loss = compute_loss(loss_options, first_tensor(forward(inputs)), 0);
    loss.backward();
    int64_t optimizer_start = device_now();
    optimizer.step();
    int64_t end = device_now();
    if (timed) {
      step_ns.push_back(end - start);
      optimizer_ns.push_back(end - optimizer_start);
    }
    return loss.item<double>();
  }
};

LoadedModel copy_of(const LoadedModel& m) {
  LoadedModel copy = m;
  at::NoGradGuard no_grad;         // copies without history: leaves an optimizer can update
  copy.module = m.module.clone();  // its own parameters: both executors start from the same weights
  return copy;
}

std::vector<at::Tensor> trainable(LoadedModel& m) {
  std::vector<at::Tensor> params;
  for (auto p : m.module.parameters()) params.push_back(p.set_requires_grad(true));
  if (params.empty()) throw Error(ErrorKind::Input, fmt::format("bench --train: {} has no parameters to train", m.path));
  return params;
}

double ms(const std::vector<int64_t>& samples) { return analysis::median(samples) / 1e6; }

struct OptimizerTiming {
  std::string name;
  double ms = 0;
};

// Every kernel that can take the optimizer step, timed alone on its own copy of `params` with
// their gradients: which one is fastest on this machine, measured in the same process (on a GPU:
// tcprof's CUDA kernel, LibTorch's fused kernels and torch::optim). A sample is kStepsPerSample
// steps back to back between two waits for the device, divided by them: on a GPU the host queues
// one step while the device runs the one before, as in training, so the figure is the device's
// time a step and not a wait's latency. One candidate at a time, so that only one copy of the
// parameters and their state is alive beside the trainers'; one that cannot be made or run here
// (no NVRTC, no memory left) is left out.
std::vector<OptimizerTiming> time_optimizer_kernels(const OptimizerChoice& o, const std::vector<at::Tensor>& params,
                                                    int iters) {
  constexpr int kStepsPerSample = 5;
  const c10::Device device = params.front().device();
  std::vector<OptimizerTiming> out;
  for (OptimizerKernel kernel : {OptimizerKernel::Generated, OptimizerKernel::TcprofCuda, OptimizerKernel::LibTorch,
                                 OptimizerKernel::TorchOptim}) {
    if (!why_optimizer_cannot_run(kernel, params).empty()) continue;
    try {
      std::vector<at::Tensor> copies;
      {
        at::NoGradGuard no_grad;
        for (const auto& p : params) {
          at::Tensor c = p.detach().clone().set_requires_grad(true);
          if (p.grad().defined()) c.mutable_grad() = p.grad().detach().clone();
          copies.push_back(c);
        }
      }
      OptimizerStep step = make_optimizer_with(kernel, o, copies);
      std::vector<int64_t> ns;
      for (int i = -1; i < iters; ++i) {  // one untimed sample first
        int64_t start = now_ns_after_device(device);
        for (int k = 0; k < kStepsPerSample; ++k) step.step();
        int64_t end = now_ns_after_device(device);
        if (i >= 0) ns.push_back((end - start) / kStepsPerSample);
      }
      out.push_back({step.name, ms(ns)});
    } catch (const std::exception&) {
      continue;  // the step's own choice (make_optimizer) says why where it matters
    }
  }
  return out;
}

}  // namespace

void run_train_bench(const TrainBenchOptions& o) {
  if (o.threads < 1 || o.iters < 1 || o.warmup < 0) throw Error(ErrorKind::Usage, "--threads and --iters must be at least 1");
  LossOptions loss_options = parse_loss_options(o.loss, o.target, o.model.seed);
  check_optimizer(o.optimizer);
  set_intra_op_threads(o.threads);
  nlohmann::json extra = {{"iters", o.iters}, {"threads", o.threads}, {"train", true}, {"target", o.target},
                          {"loss", o.loss}, {"optimizer", o.optimizer.kind}, {"lr", o.optimizer.lr},
                          {"weight_decay", o.optimizer.weight_decay}, {"momentum", o.optimizer.momentum}};
  ModelSession s = open_model_session(o.model, "bench", config_json(o.model, extra.dump()));
  const double load_before = load_average();
  auto inputs = s.inputs->make(0);
  at::AutoGradMode grad(true);

  // Eager: LibTorch's interpreter op by op (graph executor optimisations off), torch::optim.
  Trainer eager{"eager LibTorch", copy_of(s.model), {}, {}, {}, {}, {}};
  eager.params = trainable(eager.model);
  eager.optimizer = make_optimizer(o.optimizer, eager.params, false);
  torch::jit::Method eager_forward = eager.model.module.get_method(eager.model.method);
  eager.forward = [eager_forward](const std::vector<c10::IValue>& in) mutable {
    torch::jit::GraphOptimizerEnabledGuard off(false);
    return eager_forward(in);
  };

  // tcprof: the compiled training graphs (cpp or cuda backend) and the fused optimizer step.
  // Cold: capture + joint graph + both graphs' compile, with an empty kernel cache.
  std::string cache_dir = temp_cache_dir();
  CompileOptions options = s.compile;
  if (options.backend != "eager") options.kernel_cache_dir = cache_dir;
  Trainer tcprof{"tcprof (" + o.model.backend + ")", copy_of(s.model), {}, {}, {}, {}, {}};
  tcprof.params = trainable(tcprof.model);
  tcprof.optimizer = make_optimizer(o.optimizer, tcprof.params, o.model.backend != "eager");
  auto compiled = std::make_shared<CompiledModule>(tcprof.model, options, s.writer.get(), nullptr);
  tcprof.forward = [compiled](const std::vector<c10::IValue>& in) { return compiled->call(in); };

  // The first step of each from the same weights: the losses agree, or the timing means nothing.
  // tcprof's first call captures and compiles (its result is the capture's own run); the second
  // step is the first through the compiled graphs, and it is compared too.
  double first_eager = eager.step(inputs, loss_options, false), first_tcprof = tcprof.step(inputs, loss_options, false);
  const double cold_s = static_cast<double>(compiled->stats().compile_ns) / 1e9;
  double second_eager = eager.step(inputs, loss_options, false), second_tcprof = tcprof.step(inputs, loss_options, false);
  auto close = [](double a, double b) { return std::abs(a - b) <= 1e-4 * std::max(1.0, std::abs(b)); };
  if (!close(first_tcprof, first_eager) || !close(second_tcprof, second_eager)) {
    throw Error(ErrorKind::Check, fmt::format("bench --train: tcprof's losses {:.6g}, {:.6g} differ from eager LibTorch's "
                                              "{:.6g}, {:.6g}; run tcprof train --backend eager to compare",
                                              first_tcprof, second_tcprof, first_eager, second_eager));
  }
  // Warm start: a new module (as a new process would be) reading the kernels from the cache.
  int64_t t1 = now_ns();
  {
    LoadedModel warm_model = copy_of(s.model);
    trainable(warm_model);
    CompiledModule warm(warm_model, options, nullptr, nullptr);
    warm.call(inputs);
  }
  double warm_s = static_cast<double>(now_ns() - t1) / 1e9;

  // Round-robin, as bench's inference timing: a slow spell of the machine slows both alike.
  for (int i = 0; i < o.warmup; ++i) {
    eager.step(inputs, loss_options, false);
    tcprof.step(inputs, loss_options, false);
  }
  for (int i = 0; i < o.iters; ++i) {
    eager.step(inputs, loss_options, true);
    tcprof.step(inputs, loss_options, true);
  }
  const std::vector<OptimizerTiming> kernels = time_optimizer_kernels(o.optimizer, tcprof.params, o.iters);
  const double load_after = load_average();
  finish_session(s);
  std::error_code ignored;
  std::filesystem::remove_all(cache_dir, ignored);

  const double eager_ms = ms(eager.step_ns), tcprof_ms = ms(tcprof.step_ns);
  const double eager_opt = ms(eager.optimizer_ns), tcprof_opt = ms(tcprof.optimizer_ns);
  const std::string note = backward_note(*compiled, o.model.backend);
  if (o.model.json) {
    nlohmann::json kernels_json = nlohmann::json::array();
    for (const auto& k : kernels) kernels_json.push_back({{"name", k.name}, {"ms", k.ms}});
    nlohmann::json j = {{"eager_ms", eager_ms}, {"compiled_ms", tcprof_ms}, {"speedup", eager_ms / tcprof_ms},
                        {"baselines", {{"eager", eager_ms}}}, {"train", true},
                        {"optimizer", {{"eager", eager.optimizer.name}, {"compiled", tcprof.optimizer.name},
                                       {"eager_ms", eager_opt}, {"compiled_ms", tcprof_opt},
                                       {"speedup", eager_opt / tcprof_opt}, {"kernels", kernels_json}}},
                        {"forward_backward", {{"eager_ms", eager_ms - eager_opt}, {"compiled_ms", tcprof_ms - tcprof_opt}}},
                        {"compile_s", cold_s}, {"warm_compile_s", warm_s}, {"threads", o.threads}, {"iters", o.iters},
                        {"backend", o.model.backend}, {"graph_breaks", compiled->stats().graph_breaks},
                        {"recompiles", compiled->stats().recompiles}, {"note", note},
                        {"load_average_before", load_before}, {"load_average_after", load_after},
                        {"quiet", quiet_machine(load_before, load_after, o.threads)},
                        {"db", s.recording() ? nlohmann::json(s.db_path) : nlohmann::json(nullptr)}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("bench --train {} ({}, {} {}, {} thread{}, median of {} steps)\n", o.model.model,
                           fmt::join(o.model.inputs, " "), o.loss, o.optimizer.kind, o.threads, o.threads == 1 ? "" : "s",
                           o.iters);
  std::cout << fmt::format("  {:<34} {:>10} {:>9} {:>15} {:>9}\n", "executor", "ms/step", "vs eager", "optimizer ms",
                           "vs eager");
  for (const Trainer* t : {&eager, &tcprof}) {
    double step = ms(t->step_ns), opt = ms(t->optimizer_ns);
    std::cout << fmt::format("  {:<34} {:>10.3f} {:>8.2f}x {:>15.3f} {:>8.2f}x\n", t->name + " + " + t->optimizer.name,
                             step, eager_ms / step, opt, eager_opt / opt);
  }
  std::string alone;
  for (const auto& k : kernels) alone += fmt::format("{}{} {:.3f} ms", alone.empty() ? "" : " · ", k.name, k.ms);
  std::cout << fmt::format("  optimizer step alone, each kernel on its own copy (back to back): {}\n", alone);
  std::cout << fmt::format("  compile {:.3f} s cold, {:.3f} s warm · {}\n", cold_s, warm_s, note);
  std::cout << load_line(load_before, load_after, o.threads);
}

}  // namespace tcprof::cli
