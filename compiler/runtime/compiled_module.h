// CompiledModule: the runtime behind `tcprof run` and the C++ API. Each call walks frames: finds
// the newest cache entry whose guards hold (or compiles one, recording why), runs its graph, and
// at a graph break runs the breaking op eagerly and continues in the resume frame. Every compile,
// guard failure, recompile, break and call is recorded in the run's store as it happens.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/events.h"
#include "compiler/backends/backend.h"
#include "compiler/runtime/compile_options.h"
#include "compiler/frontend/frame.h"
#include "compiler/frontend/model_loader.h"
#include "compiler/frontend/program.h"
#include "compiler/frontend/tracer.h"
#include "profiler/cpu_profiler.h"

namespace tcprof {

class DeviceTimer;
class RunWriter;

struct RuntimeStats {
  int64_t calls = 0, compiles = 0, recompiles = 0, guard_failures = 0, graph_breaks = 0,
          eager_calls = 0, recompile_limit_hits = 0, cache_entries = 0, compile_failures = 0;
  int64_t compile_ns = 0;
  // The first line of the first compiler failure (compile_failures graphs fell back to eager).
  std::string first_compile_failure;
};

class CompiledModule {
 public:
  // `writer` may be null: nothing is recorded then. `profiler` (may be null) times every kernel,
  // guard check and eager op of each call.
  CompiledModule(const LoadedModel& model, CompileOptions options, RunWriter* writer,
                 CpuProfiler* profiler = nullptr);
  ~CompiledModule();

  // Runs one call. Throws Error(Check) for fullgraph breaks and fail_on_recompile, Error(Input)
  // when the model fails on the inputs.
  c10::IValue call(const std::vector<c10::IValue>& inputs);

  // The uncompiled module on the same inputs (the --verify reference).
  c10::IValue call_eager(const std::vector<c10::IValue>& inputs);

  const RuntimeStats& stats() const { return stats_; }
  // The id of the latest call (its `calls` row): a training step attributes its backward pass and
  // optimizer step to it.
  Id last_call_id() const { return last_call_id_; }
  // The latest call's time, as its `calls` row records it: on a GPU the device's time between two
  // CUDA events around the call (the call waits for them), elsewhere the host clock. Every command
  // and view shows this one figure per call (docs/gpu.md, "Per-call time").
  int64_t last_call_ns() const { return last_call_ns_; }
  // How last_call_ns() was taken: "cuda events", or "host clock" (the CPU, or a LibTorch before 2.5).
  const char* call_timed_with() const;
  const std::vector<std::unique_ptr<Frame>>& frames() const { return frames_; }
  const LoadedModel& model() const { return model_; }

 private:
  Frame& root_frame();
  Frame& successor(Frame& from, const CacheEntry& entry, const std::vector<bool>& outcome);
  CacheEntry* lookup(Frame& frame, const std::vector<c10::IValue>& values);
  struct CallResult {
    c10::IValue value;
    std::string path = "compiled";  // or "eager"
    Id root_compile = 0;
  };
  bool runs_eagerly_by_stance() const;
  CallResult run_frames(Frame& root, const std::vector<c10::IValue>& inputs, Id call_id);
  CacheEntry* compile_on_miss(Frame& frame, const std::vector<c10::IValue>& values, Id call_id,
                              std::vector<c10::IValue>* outputs);
  std::vector<std::string> explain_miss(Frame& frame, const std::vector<c10::IValue>& values, Id call_id,
                                        const Guard** first_guard);
  bool runs_eagerly_after_miss(Frame& frame, const std::string& reason);
  std::string eager_miss_cause(const Frame& frame) const;
  void mark_dynamic_dim(Frame& frame, int input, int dim);
  void mark_changed_since_eager_call(Frame& root, const std::vector<c10::IValue>& inputs);
  CacheEntry& compile(Frame& frame, const std::vector<c10::IValue>& values, const std::string& reason,
                      std::vector<c10::IValue>* capture_outputs);
  std::vector<c10::IValue> run_break(const EntryExit& exit, const std::vector<c10::IValue>& outputs,
                                     const std::vector<c10::IValue>& frame_inputs);
  void record_frame(Frame& frame);
  void record_sources();
  void record_break(const CacheEntry& entry);
  [[noreturn]] void fail_on_recompile(const Frame& frame, const std::vector<std::string>& messages,
                                      const Guard* guard);

  LoadedModel model_;
  CompileOptions options_;
  RunWriter* writer_;
  CpuProfiler* profiler_;
  KernelKey guard_key_, eager_call_key_;
  Program program_;
  Tracer tracer_;
  std::unique_ptr<Backend> backend_;
  std::vector<std::unique_ptr<Frame>> frames_;
  RuntimeStats stats_;
  int64_t call_id_ = 0;
  Id last_call_id_ = 0;
  int64_t last_call_ns_ = 0;
  std::unique_ptr<DeviceTimer> call_timer_;  // CUDA events of the GPU the calls run on
  int call_timer_gpu_ = -1;
  std::vector<c10::IValue> eager_call_inputs_;  // eager_then_compile: the eager first call's inputs
};

// Builds the value a Return exit describes from the graph's outputs.
c10::IValue build_result(const ResultTemplate& t, const std::vector<c10::IValue>& outputs,
                         const SymBindings& bindings);

}  // namespace tcprof
