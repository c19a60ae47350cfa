// Options and set-up shared by the commands that load and run a model (explain, run, check,
// bench, train): the model, its inputs, compile options and the run database.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/grad_mode.h>

#include "analysis/call_timing.h"
#include "compiler/runtime/compile_options.h"
#include "compiler/runtime/compiled_module.h"
#include "compiler/runtime/input_generator.h"
#include "compiler/frontend/model_loader.h"
#include "core/interrupt.h"
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
  std::string arch;     // cuda: the architecture NVRTC compiles for (empty: the GPU's, else sm_90)
  std::string cuda_graphs = "on";  // cuda: replay compiled graphs on a GPU as CUDA graphs
  bool strict = false;  // cpp: a graph that fails to compile is an error (exit 1), not an eager fallback
  bool grad = false;    // run with autograd on (default: inference, like torch.no_grad)
  std::string profile = "summary";
  std::string device = "cpu";  // cpu | cuda | cuda:N
  std::string db;  // "none": record nothing
  bool json = false;  // machine output on stdout; the model's own prints go to stderr
};

// Adds the shared flags to `cmd`; `compile_flags` adds stance/fullgraph/limit/dynamic/backend.
void add_model_options(CLI::App* cmd, ModelOptions& o, bool compile_flags);

// Everything a model command needs, validated: a clear Error(Usage/Input) otherwise.
struct ModelSession {
  LoadedModel model;
  CompileOptions compile;
  std::unique_ptr<InputGenerator> inputs;
  std::unique_ptr<RunWriter> writer;  // null under --db none
  interrupt::Registration on_interrupt;  // SIGINT/SIGTERM: commit what was recorded, mark the run
  // CUPTI in a CUDA run; declared before the profiler, which announces launches to it.
  std::shared_ptr<LaunchObserver> gpu_collector;
  std::unique_ptr<CpuProfiler> profiler;
  std::unique_ptr<at::AutoGradMode> grad_mode;  // the whole command runs in this mode
  c10::Device device{c10::kCPU};                // the module's and the inputs' device
  std::string db_path;                          // empty under --db none
  bool created_db = false;                      // the file did not exist before this command
  bool recording() const { return writer != nullptr; }
};

ModelSession open_model_session(const ModelOptions& o, const std::string& command, const std::string& config_json);

// Marks the run failed and rethrows `e`. What was recorded stays, and the message names the
// database; a file this command created that holds nothing of the model is removed instead.
[[noreturn]] void fail_session(ModelSession& s, const Error& e);
// Flushes the profiler's last window (and CUPTI's records in a CUDA run), closes the run as finished.
void finish_session(ModelSession& s);

// "  1 graph failed to compile and runs eagerly: C++ compiler failed (exit 1): ..." with the
// --strict hint; for run and explain summaries. Empty when every graph compiled.
std::string compile_failure_text(const RuntimeStats& stats);

// TorchScript's print() writes to stdout; under --json (and CI formats) stdout is the machine
// output, so the model's prints go to stderr instead.
void send_model_output_to_stderr();

// The run's call timing as every reader computes it from the store (after finish_session).
analysis::CallTiming recorded_call_timing(const ModelSession& s);

// "Recorded in DB (tcprof report DB)", or that nothing was recorded (--db none).
std::string recorded_line(const ModelSession& s);

// ./tcprof-runs/<model>-<date-time>.db
std::string default_db_path(const std::string& model_path);

}  // namespace tcprof::cli

namespace tcprof::cli {
// The whole configuration of a run as JSON, recorded in runs.config_json.
std::string config_json(const ModelOptions& o, const std::string& extra_json = "{}");
}  // namespace tcprof::cli
