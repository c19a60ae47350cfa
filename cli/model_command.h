// Options and set-up shared by the commands that load and run a model (explain, run, check,
// bench, train): the model, its inputs, compile options and the run database.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/grad_mode.h>

#include "compiler/runtime/compile_options.h"
#include "compiler/runtime/input_generator.h"
#include "compiler/frontend/model_loader.h"
#include "core/error.h"
#include "core/run_writer.h"
#include "profiler/cpu_profiler.h"

namespace CLI {
class App;
}

namespace tcprof::cli {

struct ModelOptions {
  std::string model;
  std::string method = "forward";
  std::vector<std::string> inputs;
  std::vector<std::string> vary;
  std::vector<std::string> dynamic;
  uint64_t seed = 0;
  std::string stance = "default";
  bool fullgraph = false;
  int recompile_limit = 8;
  std::string backend = "cpp";
  bool strict = false;  // cpp: a graph that fails to compile is an error (exit 1), not an eager fallback
  bool grad = false;    // run with autograd on (default: inference, like torch.no_grad)
  std::string profile = "summary";
  std::string db;
  bool json = false;
};

// Adds the shared flags to `cmd`; `compile_flags` adds stance/fullgraph/limit/dynamic/backend.
void add_model_options(CLI::App* cmd, ModelOptions& o, bool compile_flags);

// Everything a model command needs, validated: a clear Error(Usage/Input) otherwise.
struct ModelSession {
  LoadedModel model;
  CompileOptions compile;
  std::unique_ptr<InputGenerator> inputs;
  std::unique_ptr<RunWriter> writer;
  std::unique_ptr<CpuProfiler> profiler;
  std::unique_ptr<at::AutoGradMode> grad_mode;  // the whole command runs in this mode
  std::string db_path;
};

ModelSession open_model_session(const ModelOptions& o, const std::string& command, const std::string& config_json);

// Marks the run failed (keeping what was recorded) and rethrows `e` with the database named.
[[noreturn]] void fail_session(ModelSession& s, const Error& e);

// ./tcprof-runs/<model>-<date-time>.db
std::string default_db_path(const std::string& model_path);

}  // namespace tcprof::cli

namespace tcprof::cli {
// The whole configuration of a run as JSON, recorded in runs.config_json.
std::string config_json(const ModelOptions& o, const std::string& extra_json = "{}");
}  // namespace tcprof::cli
