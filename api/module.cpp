// tcprof::Module: the C++ API over the runtime that `tcprof run` uses. It opens a run the way the
// CLI's model commands do (cli/model_command.cpp) without what belongs to a command-line process:
// no input generator, no signal handling, no printing; the caller's grad mode and threads hold.
#include "api/tcprof.h"

#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/backends/backend.h"
#include "compiler/frontend/model_loader.h"
#include "compiler/runtime/compile_options.h"
#include "compiler/runtime/compiled_module.h"
#include "compiler/runtime/device.h"
#include "compiler/runtime/torch_info.h"
#include "core/libstdcxx_binding.h"
#include "core/run_writer.h"
#include "profiler/cpu_profiler.h"
#include "profiler/gpu_recording.h"

namespace tcprof {

struct Module::State {
  LoadedModel model;
  Options options;
  CompileOptions compile;
  // Destroyed bottom-up: the compiled module before the profiler it reports to, CUPTI before the
  // writer that takes its last records.
  std::unique_ptr<RunWriter> writer;
  std::shared_ptr<LaunchObserver> gpu;
  std::unique_ptr<CpuProfiler> profiler;
  std::unique_ptr<CompiledModule> compiled;
  bool closed = false;

  void close(const char* status) {
    if (closed) return;
    closed = true;
    compiled.reset();
    profiler.reset();  // writes what a window still holds
    gpu.reset();
    if (writer) writer->close(status);
  }
};

namespace {

// A program whose std::filesystem calls would go to LibTorch's copies crashes in them; say so
// before anything runs (core/libstdcxx_binding.h).
void require_libstdcxx_first() {
  libstdcxx::Binding binding = libstdcxx::check();
  if (!binding.ok) throw Error(ErrorKind::Internal, libstdcxx::describe(binding));
}

CompileOptions compile_options(const Options& o, const LoadedModel& model) {
  CompileOptions c;
  c.stance = parse_stance(o.stance);
  c.fullgraph = o.fullgraph;
  if (o.recompile_limit < 1) throw Error(ErrorKind::Usage, "Options::recompile_limit must be at least 1");
  c.recompile_limit = o.recompile_limit;
  for (const auto& [input, dim] : o.dynamic) {
    if (input < 0 || static_cast<size_t>(input) >= model.argument_names.size() || dim < 0) {
      throw Error(ErrorKind::Usage,
                  fmt::format("Options::dynamic ({}, {}): {} takes {} inputs, numbered from 0, and dimensions "
                              "are numbered from 0",
                              input, dim, model.method, model.argument_names.size()));
    }
    c.dynamic.push_back(DimRef{input, dim});
  }
  c.backend = o.backend;
  make_backend(o.backend);  // an unknown backend is a usage error before anything is recorded
  return c;
}

std::string config_json(const Options& o) {
  nlohmann::json dynamic = nlohmann::json::array();
  for (const auto& [input, dim] : o.dynamic) dynamic.push_back(fmt::format("{}:{}", input, dim));
  nlohmann::json j = {{"api", true},           {"method", o.method},
                      {"stance", o.stance},    {"fullgraph", o.fullgraph},
                      {"recompile_limit", o.recompile_limit}, {"backend", o.backend},
                      {"dynamic", dynamic},    {"profile", o.profile},
                      {"device", o.device},    {"threads", intra_op_threads()}};
  return j.dump();
}
}  // namespace

// Opens what a Module holds: the model on its device, the run it records into, the compiled module.
struct ModuleOpener {
  static std::unique_ptr<Module::State> open(LoadedModel model, const Options& o) {
    require_libstdcxx_first();
    auto s = std::make_unique<Module::State>();
    s->options = o;
    s->compile = compile_options(o, model);
    auto mode = parse_profile_mode(o.profile);
    if (!mode) throw Error(ErrorKind::Usage, fmt::format("Options::profile '{}': use off, summary or full", o.profile));
    c10::Device device = require_device(o.device);
    if (!device.is_cpu()) model.module.to(device);
    s->model = std::move(model);
    if (!o.db.empty()) {
      RunInfo info;
      info.command = o.command;
      info.model_path = s->model.path;
      info.model_sha256 = s->model.sha256;
      info.stance = o.stance;
      info.libtorch_version = libtorch_version();
      info.device = device.str();
      info.config_json = config_json(o);
      s->writer = std::make_unique<RunWriter>(o.db, info);
    }
    s->profiler = std::make_unique<CpuProfiler>(s->writer.get(), *mode);
    if (device.is_cuda() && s->writer && *mode != ProfileMode::Off) {
      std::string why;
      s->gpu = start_gpu_recording(*s->writer, *mode, &why);
      s->profiler->set_launch_observer(s->gpu.get());
    }
    s->compiled = std::make_unique<CompiledModule>(s->model, s->compile, s->writer.get(), s->profiler.get());
    return s;
  }
};

Module Module::load(const std::string& path, const Options& options) {
  require_libstdcxx_first();
  return Module(ModuleOpener::open(load_model(path, options.method), options));
}

Module::Module(torch::jit::Module module, const Options& options, const std::string& name)
    : state_(ModuleOpener::open(model_from_module(std::move(module), name, options.method), options)) {}

Module::Module(std::unique_ptr<State> state) : state_(std::move(state)) {}
Module::Module(Module&&) noexcept = default;
Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    if (state_) state_->close("finished");
    state_ = std::move(other.state_);
  }
  return *this;
}

Module::~Module() {
  if (!state_) return;
  try {
    state_->close("finished");
  } catch (...) {
    // A destructor must not throw; the run keeps what was committed and readers see it as ended.
  }
}

c10::IValue Module::operator()(const std::vector<c10::IValue>& inputs) {
  if (!state_ || state_->closed) {
    throw Error(ErrorKind::Usage, "tcprof::Module called after finish() or fail(): its run is closed");
  }
  return state_->compiled->call(inputs);
}

c10::IValue Module::eager(const std::vector<c10::IValue>& inputs) {
  if (!state_ || state_->closed) {
    throw Error(ErrorKind::Usage, "tcprof::Module called after finish() or fail(): its run is closed");
  }
  return state_->compiled->call_eager(inputs);
}

Stats Module::stats() const {
  Stats out;
  if (!state_ || !state_->compiled) return out;
  const RuntimeStats& s = state_->compiled->stats();
  out.calls = s.calls;
  out.compiles = s.compiles;
  out.recompiles = s.recompiles;
  out.guard_failures = s.guard_failures;
  out.graph_breaks = s.graph_breaks;
  out.eager_calls = s.eager_calls;
  out.cache_entries = s.cache_entries;
  out.recompile_limit_hits = s.recompile_limit_hits;
  out.compile_failures = s.compile_failures;
  return out;
}

void Module::finish() {
  if (state_) state_->close("finished");
}

void Module::fail() {
  if (state_) state_->close("failed");
}

const std::string& Module::db_path() const {
  static const std::string none;
  return state_ && state_->writer ? state_->writer->path() : none;
}

int64_t Module::run_id() const { return state_ && state_->writer ? state_->writer->run_id() : 0; }

}  // namespace tcprof
