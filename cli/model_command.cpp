#include "cli/model_command.h"
#include "compiler/backends/backend.h"

#include <ctime>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/jit/runtime/print_handler.h>

#include "cli/text_format.h"
#include "compiler/runtime/device.h"
#include "compiler/runtime/torch_info.h"
#include "compiler/toolchain/nvrtc_compiler.h"
#include "core/error.h"
#include "core/run_reader.h"
#include "profiler/gpu_recording.h"

namespace tcprof::cli {

void add_model_options(CLI::App* cmd, ModelOptions& o, bool compile_flags) {
  cmd->add_option("model", o.model, "TorchScript archive saved with torch.jit.save")->required();
  cmd->add_option("--input,-i", o.inputs,
                  "One per forward argument, in order: DTYPE[D0,D1,...] with optional (LO,HI) range "
                  "for random integers (f32[8,3,224,224], i64[4,128](0,1024), bool[8]) or int:N, "
                  "float:X, bool:true");
  cmd->add_option("--vary", o.vary, "Change dimension D of input I on each call: I:D=LO..HI or I:D=a,b,c");
  cmd->add_option("--seed", o.seed, "Seed for random inputs")->capture_default_str();
  cmd->add_option("--method", o.method, "Method to run")->capture_default_str();
  cmd->add_option("--db", o.db,
                  "Run database to write (default: ./tcprof-runs/<model>-<date-time>.db; none: record nothing)");
  cmd->add_flag("--json", o.json, "Machine-readable output");
  cmd->add_option("--device", o.device,
                  "cpu, cuda or cuda:N: where the module and its inputs live (on a GPU, --backend cuda compiles "
                  "the graphs, the others run them through LibTorch; CUPTI records every kernel)")
      ->capture_default_str();
  if (!compile_flags) return;
  cmd->add_option("--stance", o.stance,
                  "default | force_eager | eager_on_recompile | fail_on_recompile | eager_then_compile")
      ->capture_default_str();
  cmd->add_flag("--fullgraph", o.fullgraph, "Fail (exit 1) at the first graph break, naming it");
  cmd->add_option("--recompile-limit", o.recompile_limit,
                  "Compiles per frame before it runs eagerly (like torch's recompile_limit)")
      ->capture_default_str();
  cmd->add_option("--dynamic", o.dynamic, "Mark dimension D of input I dynamic from the first compile: I:D");
  cmd->add_option("--backend", o.backend,
                  "cpp (fused C++ kernels), cuda (fused CUDA kernels through NVRTC; on the CPU they run in emulation) "
                  "or eager (op by op through LibTorch)")
      ->capture_default_str();
  cmd->add_option("--arch", o.arch,
                  "cuda: the GPU architecture to compile for, e.g. sm_90 (H100), sm_80 (A100); default: the GPU's own, "
                  "sm_90 without one");
  cmd->add_option("--cuda-graphs", o.cuda_graphs,
                  "cuda: replay each compiled graph on a GPU as one CUDA graph from its second call (on) or launch "
                  "its kernels one by one (off)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_flag("--strict", o.strict, "cpp: exit 1 when a graph fails to compile instead of running it eagerly");
  cmd->add_flag("--grad", o.grad,
                "Run with autograd on: graphs whose parameters require grad compile a forward and a backward graph "
                "(explain shows what the backward saves and recomputes); default: inference");
  cmd->add_option("--profile", o.profile,
                  "Kernel timing: off, summary (aggregates per call, cheap) or full (every launch)")
      ->capture_default_str();
}

namespace {

// Whether the file holds nothing of the model: no run got as far as a compile or a call.
bool recorded_nothing(const std::string& db_path) {
  try {
    RunReader reader(db_path);
    for (const auto& run : reader.runs()) {
      RunCounts c = reader.counts(run.id);
      if (c.compiles > 0 || c.calls > 0) return false;
    }
    return true;
  } catch (const std::exception&) {
    return false;  // unreadable: leave it for the user to see
  }
}

void remove_database(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ec);
}

void stderr_print(const std::string& text) { std::cerr << text; }

}  // namespace

void send_model_output_to_stderr() { torch::jit::setPrintHandler(stderr_print); }

void fail_session(ModelSession& s, const Error& e) {
  s.profiler.reset();
  s.gpu_collector.reset();
  if (!s.writer) throw Error(e.kind(), e.what());
  s.on_interrupt = {};
  try {
    s.writer->close("failed");
  } catch (const std::exception&) {
  }
  s.writer.reset();
  if (s.created_db && recorded_nothing(s.db_path)) {
    remove_database(s.db_path);
    throw Error(e.kind(), e.what());
  }
  throw Error(e.kind(), fmt::format("{} (the run so far is recorded in {})", e.what(), s.db_path));
}

std::string compile_failure_text(const RuntimeStats& stats) {
  if (stats.compile_failures == 0) return "";
  std::string what = stats.compile_failures == 1 ? "1 graph failed to compile and runs"
                                                 : fmt::format("{} graphs failed to compile and run", stats.compile_failures);
  return fmt::format("  {} eagerly (--strict makes this an error):\n", what) + text::wrap("    ", stats.first_compile_failure);
}

void finish_session(ModelSession& s) {
  s.profiler.reset();  // writes what a window still holds before the run closes
  s.gpu_collector.reset();  // stops CUPTI: its last records and counters go in before the close
  s.on_interrupt = {};
  if (s.writer) s.writer->close("finished");
}

analysis::CallTiming recorded_call_timing(const ModelSession& s) {
  RunReader reader(s.db_path);
  Id run = s.writer->run_id();
  return analysis::call_timing(analysis::call_samples(reader.calls(run), reader.compiles(run)));
}

std::string recorded_line(const ModelSession& s) {
  if (!s.recording()) return "Not recorded (--db none)\n";
  return fmt::format("Recorded in {} (tcprof report {})\n", s.db_path, s.db_path);
}

std::string default_db_path(const std::string& model_path) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::string stem = std::filesystem::path(model_path).stem().string();
  std::filesystem::create_directories("tcprof-runs");
  std::string base = fmt::format("tcprof-runs/{}-{}", stem, stamp);
  std::string path = base + ".db";
  for (int i = 2; std::filesystem::exists(path); ++i) path = fmt::format("{}-{}.db", base, i);
  return path;
}

ModelSession open_model_session(const ModelOptions& o, const std::string& command, const std::string& config_json) {
  ModelSession s;
  std::vector<InputSpec> specs;
  for (const auto& text : o.inputs) specs.push_back(parse_input_spec(text));
  std::vector<VarySpec> vary;
  for (const auto& text : o.vary) vary.push_back(parse_vary_spec(text));
  s.compile.stance = parse_stance(o.stance);
  s.compile.fullgraph = o.fullgraph;
  if (o.recompile_limit < 1) throw Error(ErrorKind::Usage, "--recompile-limit must be at least 1");
  s.compile.recompile_limit = o.recompile_limit;
  for (const auto& text : o.dynamic) {
    DimRef d = parse_dim_ref(text);
    bool tensor = d.input >= 0 && static_cast<size_t>(d.input) < specs.size() &&
                  specs[static_cast<size_t>(d.input)].kind == InputSpec::Kind::Tensor;
    if (!tensor || d.dim < 0 || static_cast<size_t>(d.dim) >= specs[static_cast<size_t>(d.input)].sizes.size()) {
      throw Error(ErrorKind::Usage,
                  tensor ? fmt::format("--dynamic {}: input {} ({}) has {} dimensions, so D must be 0..{}", text, d.input,
                                       specs[static_cast<size_t>(d.input)].text, specs[static_cast<size_t>(d.input)].sizes.size(),
                                       static_cast<int>(specs[static_cast<size_t>(d.input)].sizes.size()) - 1)
                         : fmt::format("--dynamic {}: there is no tensor input {} (the --input list has {})", text, d.input,
                                       specs.size()));
    }
    s.compile.dynamic.push_back(d);
  }
  s.compile.backend = o.backend;
  s.compile.strict = o.strict;
  s.compile.cuda_arch = o.arch;
  s.compile.cuda_graphs = o.cuda_graphs == "on";
  make_backend(o.backend);  // an unknown name is a usage error before anything is recorded
  if (!o.arch.empty() && o.backend != "cuda") {
    throw Error(ErrorKind::Usage, fmt::format("--arch {} is for --backend cuda (this run uses --backend {})", o.arch, o.backend));
  }
  if (!o.arch.empty() && !valid_cuda_arch(o.arch)) {
    throw Error(ErrorKind::Usage, fmt::format("--arch {}: not a CUDA architecture; give it as sm_XY, e.g. sm_90 (H100) or sm_80 "
                                              "(A100)", o.arch));
  }
  s.grad_mode = std::make_unique<at::AutoGradMode>(o.grad || command == "train");
  set_intra_op_threads(intra_op_threads());  // OpenBLAS's pool follows LibTorch's thread count
  s.device = require_device(o.device);  // before the model loads: a GPU-less machine says so at once
  s.model = load_model(o.model, o.method);
  if (!s.device.is_cpu()) s.model.module.to(s.device);
  check_inputs_against_model(specs, s.model.argument_names, s.model.argument_types);
  s.inputs = std::make_unique<InputGenerator>(specs, vary, o.seed);
  s.inputs->set_device(s.device);

  RunInfo info;
  info.command = command;
  info.model_path = o.model;
  info.model_sha256 = s.model.sha256;
  info.stance = o.stance;
  info.libtorch_version = libtorch_version();
  info.device = s.device.str();
  info.config_json = config_json;
  auto mode = parse_profile_mode(o.profile);
  if (!mode) throw Error(ErrorKind::Usage, fmt::format("unknown --profile '{}' (use off, summary or full)", o.profile));
  if (o.json) send_model_output_to_stderr();
  if (o.db != "none") {
    s.db_path = o.db.empty() ? default_db_path(o.model) : o.db;
    s.created_db = !std::filesystem::exists(s.db_path);
    s.writer = std::make_unique<RunWriter>(s.db_path, info);
    s.on_interrupt = interrupt::Registration([writer = s.writer.get(), path = s.db_path](int) {
      writer->mark_interrupted(std::chrono::seconds(5));
      fmt::print(stderr, "tcprof: run {} in '{}' is marked interrupted; what it recorded is kept\n", writer->run_id(), path);
    });
  }
  s.profiler = std::make_unique<CpuProfiler>(s.writer.get(), *mode);
  if (s.device.is_cuda() && s.writer && *mode != ProfileMode::Off) {
    std::string why;
    s.gpu_collector = start_gpu_recording(*s.writer, *mode, &why);
    if (!s.gpu_collector) fmt::print(stderr, "tcprof: warning: GPU kernels are not recorded: {}\n", why);
    s.profiler->set_launch_observer(s.gpu_collector.get());  // GPU kernels carry call and graph
  }
  return s;
}

}  // namespace tcprof::cli

namespace tcprof::cli {

std::string config_json(const ModelOptions& o, const std::string& extra_json) {
  nlohmann::json j = {{"model", o.model},           {"method", o.method},
                      {"inputs", o.inputs},         {"vary", o.vary},
                      {"dynamic", o.dynamic},       {"seed", o.seed},
                      {"stance", o.stance},         {"fullgraph", o.fullgraph},
                      {"recompile_limit", o.recompile_limit}, {"backend", o.backend},
                      {"strict", o.strict},         {"grad", o.grad},
                      {"profile", o.profile},       {"device", o.device},
                      {"threads", intra_op_threads()}};
  auto extra = nlohmann::json::parse(extra_json, nullptr, false);
  if (extra.is_object()) j.update(extra);
  return j.dump();
}

}  // namespace tcprof::cli
