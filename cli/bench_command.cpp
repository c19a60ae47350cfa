// `tcprof bench MODEL --input ...`: in one process, eager LibTorch (graph executor optimisations
// off), TorchScript's optimised executor (freeze + optimize_for_inference) and tcprof compiled;
// warm-up, then medians and speedups. Outputs are checked against eager before timing.
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <functional>
#include <optional>
#include <iostream>

#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/cuda.h>
#include <torch/script.h>

#include "cli/bench_command.h"
#include "cli/commands.h"
#include "cli/model_command.h"
#include "cli/text_format.h"
#include "compiler/runtime/compiled_module.h"
#include "compiler/runtime/device_timer.h"
#include "compiler/runtime/torch_info.h"
#include "core/clock.h"
#include "core/error.h"

namespace tcprof::cli {
namespace {

// Inference options; the training bench's (--train) are the base's.
struct BenchOptions : TrainBenchOptions {
  bool torchscript = true;
  bool train = false;
  bool recording_cost = false;
  int block = 10;
};

double median_ms(std::vector<int64_t> samples) {
  std::sort(samples.begin(), samples.end());
  return static_cast<double>(samples[samples.size() / 2]) / 1e6;
}

// One line of a LibTorch error: the exception's own line ("RuntimeError: ...") when the message is
// a TorchScript traceback, else its first line.
std::string error_summary(const std::string& what) {
  size_t at = what.rfind("\nRuntimeError: ");
  std::string line = at == std::string::npos ? what : what.substr(at + 1);
  return line.substr(0, line.find('\n'));
}

bool outputs_match(const c10::IValue& a, const c10::IValue& b) {
  if (a.isTensor() && b.isTensor()) {
    return a.toTensor().sizes() == b.toTensor().sizes() &&
           (!a.toTensor().is_floating_point() || at::allclose(a.toTensor(), b.toTensor(), 1e-4, 1e-5));
  }
  if (a.isTuple() && b.isTuple()) {
    const auto& x = a.toTupleRef().elements();
    const auto& y = b.toTupleRef().elements();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!outputs_match(x[i], y[i])) return false;
    }
    return true;
  }
  return a.tagKind() == b.tagKind();
}

}  // namespace

std::string temp_cache_dir() {
  std::string templ = (std::filesystem::temp_directory_path() / "tcprof-bench-XXXXXX").string();
  if (!mkdtemp(templ.data())) throw Error(ErrorKind::Internal, "bench: cannot create a temporary cache directory");
  return templ;
}

double load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return -1;
  double load = -1;
  if (std::fscanf(f, "%lf", &load) != 1) load = -1;
  std::fclose(f);
  return load;
}

bool quiet_machine(double before, double after, int threads) {
  return before >= 0 && before < 0.5 && after < threads + 0.75;
}

std::string load_line(double before, double after, int threads) {
  return fmt::format("  load average {:.2f} before, {:.2f} after{}\n", before, after,
                     quiet_machine(before, after, threads) ? "" : ": the machine was not quiet, so these timings are noisy; rerun alone");
}

void add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  auto* cmd = app.add_subcommand("bench", "Eager LibTorch vs TorchScript's optimised executor vs tcprof compiled, in one process");
  add_model_options(cmd, o->model, true);
  cmd->add_option("--threads", o->threads, "Intra-op threads for every executor (reported)")->capture_default_str();
  cmd->add_option("--iters", o->iters, "Timed calls per executor (medians are reported)")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed calls first")->capture_default_str();
  // Builds with NNC's LLVM CPU fusion on (Debian 13's LibTorch 2.6) spend minutes compiling the
  // TorchScript baseline of a big CNN; a user who only wants eager vs tcprof skips it.
  cmd->add_flag("!--no-torchscript", o->torchscript, "Skip TorchScript's optimised executor (its own compile can take minutes)");
  cmd->add_flag("--train", o->train,
                "Time a training step (forward, loss, backward, optimizer step) instead of inference; needs --target "
                "(or --loss model)");
  cmd->add_option("--target,-t", o->target, "With --train: the target spec, as train's (i64[4,128](0,512), f32[8,10])");
  cmd->add_option("--loss", o->loss, "With --train: mse | cross_entropy | model (forward returns its loss)")
      ->capture_default_str();
  add_optimizer_options(cmd, o->optimizer, "With --train: ");
  cmd->add_flag("--recording-cost", o->recording_cost,
                "Time tcprof's calls under --profile off, summary and full in one process instead (what recording "
                "costs; on a GPU with CUDA events)");
  cmd->add_option("--block", o->block, "With --recording-cost: calls per mode before the next mode's turn")
      ->capture_default_str();
  cmd->callback([o] {
    if (o->train && o->recording_cost) throw Error(ErrorKind::Usage, "--recording-cost times inference calls: leave out --train");
    if (o->train) return run_train_bench(*o);
    if (o->recording_cost) {
      if (!o->target.empty()) throw Error(ErrorKind::Usage, "--target is for a training bench: add --train");
      return run_recording_cost_bench(*o, o->block);
    }
    if (!o->target.empty()) throw Error(ErrorKind::Usage, "--target is for a training bench: add --train");
    if (o->threads < 1 || o->iters < 1 || o->warmup < 0) throw Error(ErrorKind::Usage, "--threads and --iters must be at least 1");
    set_intra_op_threads(o->threads);
    ModelSession s = open_model_session(o->model, "bench",
                                        config_json(o->model, fmt::format("{{\"iters\":{},\"threads\":{}}}", o->iters, o->threads)));
    auto inputs = s.inputs->make(0);
    const double load_before = load_average();
    torch::NoGradGuard no_grad;  // inference benchmark, as torch.compile's CPU numbers are

    // Eager: the module's method with the graph executor's optimisations off, on an independent
    // copy: a model that keeps state must start from the same state in every executor.
    torch::jit::Module eager_module = s.model.module.clone();
    torch::jit::Method forward = eager_module.get_method(s.model.method);
    c10::IValue reference;
    {
      torch::jit::GraphOptimizerEnabledGuard off(false);
      reference = forward(inputs);
    }

    // TorchScript's optimised executor on a frozen copy, run under InferenceMode as
    // optimize_for_inference intends: its MKLDNN-layout tensors hit a dispatcher assert under
    // autograd's keys in some builds (Debian 13's CUDA LibTorch 2.6: max_pool2d). It is run once
    // here, so a baseline that cannot run is reported as not available, not as tcprof's failure.
    std::string ts_note = o->torchscript ? "" : "skipped (--no-torchscript)";
    std::optional<torch::jit::Module> frozen;
    if (o->torchscript) {
      try {
        torch::jit::Module copy = s.model.module.clone();
        copy.eval();
        torch::jit::Module f = torch::jit::freeze(copy, c10::nullopt, true);
        frozen = torch::jit::optimize_for_inference(f);
        c10::InferenceMode inference;
        frozen->get_method(s.model.method)(inputs);
      } catch (const std::exception& e) {
        frozen.reset();
        ts_note = error_summary(e.what());
      }
    }

    // tcprof compiled: cold = capture + compile with an empty kernel cache; warm = a second module
    // (as a new process would) loading the same kernels from that now populated cache. The warm
    // start's capture runs the model once eagerly (its outputs are the call's), so the time it
    // takes beyond one eager call is what compiling from the cache costs.
    std::string cache_dir = temp_cache_dir();
    CompileOptions cold_options = s.compile;
    if (cold_options.backend != "eager") cold_options.kernel_cache_dir = cache_dir;  // cpp and cuda compile
    int64_t t0 = now_ns();
    CompiledModule compiled(s.model, cold_options, s.writer.get(), nullptr);
    c10::IValue out = compiled.call(inputs);
    double compile_s = static_cast<double>(now_ns() - t0) / 1e9;
    if (!outputs_match(out, reference)) {
      throw Error(ErrorKind::Check, "bench: the compiled output differs from eager LibTorch; run tcprof run --verify");
    }
    int64_t t1 = now_ns();
    {
      CompiledModule warm(s.model, cold_options, nullptr, nullptr);
      warm.call(inputs);
    }
    double warm_s = static_cast<double>(now_ns() - t1) / 1e9;

    // Timed calls round-robin (eager, TorchScript, tcprof, eager, ...): a machine that slows
    // down for a while slows all three alike, so the ratios hold on a noisy host.
    std::vector<std::function<void()>> executors = {
        [&] {
          torch::jit::GraphOptimizerEnabledGuard off(false);
          forward(inputs);
        },
        [&] { compiled.call(inputs); }};
    if (frozen) {
      torch::jit::Method ts = frozen->get_method(s.model.method);
      executors.push_back([ts, &inputs]() mutable {
        c10::InferenceMode inference;
        ts(inputs);
      });
    }
    for (int i = 0; i < std::max(o->warmup, 3); ++i) {  // TorchScript profiles its first runs
      for (auto& run : executors) run();
    }
    std::vector<std::vector<int64_t>> samples(executors.size());
    // On a GPU a call returns once its kernels are queued: the timer waits for them, so the time
    // is the GPU's work and not the launch (compiler/runtime/device_timer.h).
    DeviceTimer timer(s.device);
    for (int i = 0; i < o->iters; ++i) {
      for (size_t e = 0; e < executors.size(); ++e) {
        timer.start();
        executors[e]();
        samples[e].push_back(timer.stop_ns());
      }
    }
    double eager_ms = median_ms(samples[0]), compiled_ms = median_ms(samples[1]);
    const double warm_beyond_eager_s = warm_s - eager_ms / 1e3;
    const double load_after = load_average();
    const bool quiet = quiet_machine(load_before, load_after, o->threads);
    nlohmann::json baselines = {{"eager", eager_ms}};
    if (frozen) baselines["torchscript_optimized"] = median_ms(samples[2]);
    finish_session(s);

    std::error_code ignored;
    std::filesystem::remove_all(cache_dir, ignored);
    double speedup = eager_ms / compiled_ms;
    if (o->model.json) {
      nlohmann::json j = {{"eager_ms", eager_ms}, {"compiled_ms", compiled_ms}, {"speedup", speedup},
                          {"baselines", baselines}, {"compile_s", compile_s}, {"warm_compile_s", warm_s},
                          {"warm_beyond_eager_s", warm_beyond_eager_s},
                          {"threads", o->threads}, {"iters", o->iters}, {"backend", o->model.backend},
                          {"graph_breaks", compiled.stats().graph_breaks},
                          {"load_average_before", load_before}, {"load_average_after", load_after},
                          {"quiet", quiet}, {"timed_with", timer.method()},
                          {"db", s.recording() ? nlohmann::json(s.db_path) : nlohmann::json(nullptr)}};
      if (!ts_note.empty()) j["torchscript_optimized_error"] = ts_note;
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::cout << fmt::format("bench {} ({}, {} thread{}, median of {}{})\n", o->model.model,
                             fmt::join(o->model.inputs, " "), o->threads, o->threads == 1 ? "" : "s", o->iters,
                             s.device.is_cuda() ? fmt::format(", on {}, timed with {}", s.device.str(), timer.method()) : "");
    std::cout << fmt::format("  {:<26} {:>10}  {:>8}\n", "executor", "ms/call", "vs eager");
    std::cout << fmt::format("  {:<26} {:>10.3f}  {:>7.2f}x\n", "eager LibTorch", eager_ms, 1.0);
    if (baselines.contains("torchscript_optimized")) {
      double ts = baselines["torchscript_optimized"];
      std::cout << fmt::format("  {:<26} {:>10.3f}  {:>7.2f}x\n", "TorchScript optimised", ts, eager_ms / ts);
    } else {
      std::cout << fmt::format("  TorchScript optimised: {}\n", o->torchscript ? "not available (" + ts_note + ")" : ts_note);
    }
    const bool emulated = o->model.backend == "cuda" && !s.device.is_cuda();
    std::cout << fmt::format("  {:<26} {:>10.3f}  {:>7.2f}x\n", "tcprof (" + o->model.backend + (emulated ? ", emulated" : "") + ")",
                             compiled_ms, speedup);
    if (emulated) {
      std::cout << "  the cuda backend's kernels ran on the CPU in emulation (a correctness check, not a speed): "
                   "bench on a GPU with --device cuda\n";
    }
    std::cout << fmt::format("  compile {:.3f} s cold, {:.3f} s warm ({:.3f} s beyond the eager forward it runs) · "
                             "graph breaks {}\n", compile_s, warm_s, warm_beyond_eager_s, compiled.stats().graph_breaks);
    std::cout << load_line(load_before, load_after, o->threads);
  });
}

}  // namespace tcprof::cli
