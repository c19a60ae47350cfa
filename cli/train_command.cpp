// `tcprof train MODEL --input ... (--target SPEC --loss mse|cross_entropy | --loss model) --optimizer sgd|adam|adamw`:
// trains on seeded synthetic data through the compiled module and records every step (duration,
// loss) next to the breaks, recompiles and kernels the forward passes produce. Under the cpp and
// cuda backends each graph's forward and backward are compiled (compiler/autodiff) where every op
// has a derivative rule; other graphs run through LibTorch, with an `autograd` hint saying why.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/jit/runtime/print_handler.h>

#include "analysis/statistics.h"
#include "cli/commands.h"
#include "cli/model_command.h"
#include "cli/progress.h"
#include "cli/text_format.h"
#include "cli/training_step.h"
#include "compiler/runtime/autocast.h"
#include "compiler/runtime/compiled_module.h"
#include "compiler/runtime/device_timer.h"
#include "core/clock.h"
#include "core/error.h"

namespace tcprof::cli {
namespace {

struct TrainOptions {
  ModelOptions model;
  std::string target;
  std::string loss = "mse";
  OptimizerChoice optimizer;  // sgd, lr 0.01
  int64_t steps = 20;
  int64_t batches = 8;
  std::string amp = "off";  // bf16: autocast around forward and loss
};

void train(const TrainOptions& o) {
  if (o.steps < 1) throw Error(ErrorKind::Usage, "--steps must be at least 1");
  if (o.batches < 1) throw Error(ErrorKind::Usage, "--batches must be at least 1");
  LossOptions loss_options = parse_loss_options(o.loss, o.target, o.model.seed);
  check_optimizer(o.optimizer);
  c10::ScalarType amp = parse_amp(o.amp);
  nlohmann::json extra = {{"steps", o.steps}, {"target", o.target}, {"loss", o.loss}, {"optimizer", o.optimizer.kind},
                          {"lr", o.optimizer.lr}, {"weight_decay", o.optimizer.weight_decay},
                          {"momentum", o.optimizer.momentum}, {"batches", o.batches}, {"amp", o.amp}};
  ModelSession s = open_model_session(o.model, "train", config_json(o.model, extra.dump()));
  send_model_output_to_stderr();  // the model's print() must not mix with --json
  std::vector<at::Tensor> params;
  for (const auto& p : s.model.module.parameters()) {
    p.set_requires_grad(true);
    params.push_back(p);
  }
  if (params.empty()) throw Error(ErrorKind::Input, fmt::format("train: {} has no parameters to train", o.model.model));
  OptimizerStep optimizer = make_optimizer(o.optimizer, params, o.model.backend != "eager");
  const KernelKey optimizer_key =
      s.profiler->key(fmt::format("optimizer step ({})", optimizer.name), optimizer.code.empty() ? "extern" : "generated");
  const KernelKey backward_key = s.profiler->key("backward (autograd)", "eager");
  // The optimizer step is a graph of its own in the store (kind "optimizer", no compile): its
  // description as IR, the generated kernel as code, and its time attributed to it.
  Id optimizer_graph = 0;
  if (s.writer) {
    optimizer_graph = s.writer->next_id();
    GraphEvent g{optimizer_graph, 0, static_cast<int>(params.size()), optimizer.description, optimizer.code};
    g.kind = "optimizer";
    s.writer->record(g);
  }
  // Each phase's time is its host time; on a GPU the phase ends by waiting for the device, so it
  // is the phase's GPU time too (kernels are asynchronous).
  auto phase_end = [&] { return now_ns_after_device(s.device); };
  CompiledModule m(s.model, s.compile, s.writer.get(), s.profiler.get());
  ProgressBar bar("train", o.steps);
  std::optional<double> first_loss, last_loss;
  std::vector<int64_t> step_ns;
  struct {
    std::vector<int64_t> forward, backward, optimizer;
  } phases;
  std::map<int64_t, std::vector<c10::IValue>> batches;
  try {
    for (int64_t step = 0; step < o.steps; ++step) {
      // A fixed synthetic data set of --batches batches, cycled, so the loss can actually fall.
      int64_t batch = step % o.batches;
      // Each batch is made once (on the CPU, seeded, then copied to the device) and kept there;
      // every step gets a device-side copy, made before the step's clock starts, so a model that
      // changes its inputs in place cannot change the data set.
      auto made = batches.find(batch);
      if (made == batches.end()) made = batches.emplace(batch, s.inputs->make(batch)).first;
      std::vector<c10::IValue> inputs;
      for (const auto& v : made->second) inputs.push_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
      int64_t start = phase_end();  // the copy is not the step's
      optimizer.zero_grad();
      int64_t forward_start = phase_end();
      at::Tensor loss;
      {
        AutocastScope autocast(s.device.type(), amp);  // forward and loss; backward runs outside, as in PyTorch
        at::Tensor out = first_tensor(m.call(inputs));
        if (!out.is_floating_point()) throw Error(ErrorKind::Input, "train: the model's output is not floating point");
        loss = compute_loss(loss_options, out, batch);
      }
      if (!loss.requires_grad()) {
        throw Error(ErrorKind::Input, "train: the loss does not depend on any parameter (no gradient to follow)");
      }
      int64_t forward_end = phase_end();
      // The backward pass and the optimizer step belong to the step's call: their kernel rows (and
      // the GPU kernels they launch) carry its id, and closing the window flushes them.
      s.profiler->begin_call(m.last_call_id());
      {
        // Its own time: compiled backward graphs run inside and are timed as their kernels.
        auto timed = s.profiler->time_exclusive(backward_key, 0);
        loss.backward();
      }
      int64_t backward_end = phase_end();
      {
        auto timed = s.profiler->time(optimizer_key, optimizer_graph);  // its own row in the kernel table
        optimizer.step();
      }
      int64_t optimizer_end = phase_end();
      s.profiler->end_call();
      double value = loss.item<double>();
      int64_t duration = now_ns() - start;
      step_ns.push_back(duration);
      StepEvent event{step, start, duration, value};
      event.forward_ns = forward_end - forward_start;
      event.backward_ns = backward_end - forward_end;
      event.optimizer_ns = (forward_start - start) + (optimizer_end - backward_end);  // zero_grad + step
      phases.forward.push_back(event.forward_ns);
      phases.backward.push_back(event.backward_ns);
      phases.optimizer.push_back(event.optimizer_ns);
      if (s.writer) s.writer->record(event);
      if (!first_loss) first_loss = value;
      last_loss = value;
      bar.update(step + 1, fmt::format("loss {:.4g} · {}/step · {} recompiles", value,
                                       text::duration(static_cast<double>(duration)), m.stats().recompiles));
      if (!std::isfinite(value)) throw Error(ErrorKind::Check, fmt::format("train: loss is {} at step {} (lower --lr?)", value, step));
    }
  } catch (const Error& e) {
    bar.finish();
    fail_session(s, e);
  } catch (const c10::Error& e) {
    bar.finish();
    std::string what = e.what_without_backtrace();
    if (amp != c10::ScalarType::Undefined && what.find("not implemented for 'BFloat16'") != std::string::npos) {
      what += fmt::format(" (under --amp {} an op of the model has no bfloat16 kernel on {} in this LibTorch: "
                          "train without --amp)", o.amp, s.device.str());
    }
    fail_session(s, Error(ErrorKind::Input, fmt::format("train: {}", what)));
  }
  bar.finish();
  finish_session(s);
  // The same medians as report's (analysis/statistics.h).
  double ms_per_step = analysis::median(step_ns) / 1e6;
  double forward_ms = analysis::median(phases.forward) / 1e6, backward_ms = analysis::median(phases.backward) / 1e6,
         optimizer_ms = analysis::median(phases.optimizer) / 1e6;
  const RuntimeStats& st = m.stats();
  if (o.model.json) {
    nlohmann::json j = {{"steps", o.steps}, {"loss_first", *first_loss}, {"loss_last", *last_loss},
                        {"ms_per_step", ms_per_step}, {"ms_per_step_forward", forward_ms},
                        {"ms_per_step_backward", backward_ms}, {"ms_per_step_optimizer", optimizer_ms},
                        {"calls", st.calls}, {"compiles", st.compiles},
                        {"recompiles", st.recompiles}, {"guard_failures", st.guard_failures},
                        {"graph_breaks", st.graph_breaks}, {"eager_calls", st.eager_calls},
                        {"recompile_limit_hits", st.recompile_limit_hits}, {"note", backward_note(m, o.model.backend)},
                        {"optimizer_step", optimizer.name}, {"amp", o.amp},
                        {"db", s.recording() ? nlohmann::json(s.db_path) : nlohmann::json(nullptr)}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("train {}: {} · loss {:.4g} -> {:.4g} · {}/step\n",
                           text::fit(std::filesystem::path(o.model.model).filename().string(), 24),
                           text::plural(o.steps, "step", "steps"), *first_loss, *last_loss,
                           text::duration(ms_per_step * 1e6));
  std::cout << fmt::format("  step phases (medians): forward {} · backward {} · optimizer {}\n",
                           text::duration(forward_ms * 1e6), text::duration(backward_ms * 1e6),
                           text::duration(optimizer_ms * 1e6));
  std::cout << fmt::format("  {} {} lr {}{} · {} · {} · {}\n", optimizer.name, o.loss, o.optimizer.lr,
                           amp == c10::ScalarType::Undefined ? "" : " · amp " + o.amp,
                           text::plural(st.compiles, "compile", "compiles"),
                           text::plural(st.recompiles, "recompile", "recompiles"),
                           text::plural(st.graph_breaks, "graph break", "graph breaks"));
  if (st.eager_calls > 0) std::cout << fmt::format("  eager calls {}\n", st.eager_calls);
  std::cout << fmt::format("  {}\n", backward_note(m, o.model.backend));
  std::cout << recorded_line(s);
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  auto* cmd = app.add_subcommand("train", "Train on seeded synthetic data through the compiled module; record steps");
  add_model_options(cmd, o->model, true);
  cmd->add_option("--target,-t", o->target,
                  "Target spec, like --input: f32[8,10] for mse, i64[8](0,10) class indices for "
                  "cross_entropy; sizes follow the output");
  cmd->add_option("--loss", o->loss, "mse | cross_entropy | model (forward returns its loss; no --target)")
      ->capture_default_str();
  add_optimizer_options(cmd, o->optimizer, "");
  cmd->add_option("--steps", o->steps, "Optimizer steps")->capture_default_str();
  cmd->add_option("--batches", o->batches, "Distinct synthetic batches, cycled")->capture_default_str();
  cmd->add_option("--amp", o->amp,
                  "Mixed precision: bf16 runs the forward pass and loss under autocast (matmuls and "
                  "convolutions in bfloat16, parameters and gradients in f32), or off")
      ->capture_default_str();
  cmd->callback([o] { train(*o); });
}

}  // namespace tcprof::cli
