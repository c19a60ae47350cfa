// The backend interface: turns a captured graph into something that runs. `eager` interprets the
// graph op by op through LibTorch; the C++ code-generating backend plugs in behind the same
// interface.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>
#include <ATen/core/operator_name.h>

#include "compiler/ir/captured_graph.h"
#include "compiler/ir/op_dispatch.h"

namespace torch::jit {
struct Node;
}

namespace tcprof {

class CpuProfiler;

// What a backend did to compile one graph, for the store, logs and `tcprof explain`.
struct CompilePhase {
  std::string name;  // decompose, lower, schedule, codegen, cc, load
  int64_t start_ns = 0, duration_ns = 0;
};

struct PerfHint {
  std::string kind;  // fallback_op | autograd | compile_failed | layout
  std::string op;
  std::string message;
  SourceLoc loc;
};

// A graph compiled for training (compiler/autodiff): what the partition decided, for `explain
// --grad` and the store.
struct TrainingReport {
  int64_t saved_bytes = 0;    // activations kept from the forward for the backward
  int saved_inputs = 0;       // graph inputs and parameters the backward reads
  int saved_activations = 0;  // forward values it reads
  std::vector<std::string> recomputed;  // forward ops the backward runs again
  int backward_ops = 0;
  int gradients = 0;          // input and parameter gradients it returns
  int forward_kernels = 0, backward_kernels = 0;
};

// The layout pass (cpp backend): convolutions run by oneDNN on activations in its blocked layout,
// and every place a value still changes layout, for `explain`.
struct LayoutReport {
  int convolutions = 0;    // in oneDNN chains
  int post_ops = 0;        // residual adds and activations fused into them
  int channel_ops = 0;     // concatenations and max pools computed on the chains' buffers
  int blocked_values = 0;  // values handed from one chain step to the next without a reorder
  int winograd = 0;        // convolutions computed with oneDNN's Winograd algorithm (ChainFormat)
  std::string format;      // the blocked layout the primitives chose, e.g. "nChw16c"
  std::vector<std::string> reorders;  // "%12 nchw -> nChw16c into d0_conv_relu (graph input)"
};

// One of several graphs a compile made (training: the forward and the backward graph), recorded
// as its own graphs row of the compile with the kind PyTorch's logs give it.
struct CompiledPart {
  std::string kind;  // aot_forward | aot_backward
  int op_count = 0;
  std::string ir, code;
};

// One decision of the autotune phase: the candidates' times and noise, the choice and the margin
// it was taken by (compiler/backends/cpp/run/autotune_race.h); `against_plan` when the planned
// candidate lost (a direct kernel to LibTorch's op, oneDNN's own layout to another).
struct AutotuneDecision {
  std::string text;
  bool against_plan = false;
};

struct CompileReport {
  std::vector<CompilePhase> phases;
  std::string ir;    // the final IR (loop-level for cpp)
  std::string code;  // generated source, empty for eager
  std::vector<PerfHint> hints;
  int kernels = 0;         // generated kernels called by the graph
  int unique_kernels = 0;  // after sharing identical ones (regional compilation)
  int window_kernels = 0;  // directly generated convolutions and pools
  int fused_ops = 0;       // captured ops that run inside generated kernels
  int extern_calls = 0;    // LibTorch calls: views and compute-bound ops
  int fallback_calls = 0;  // LibTorch calls for ops without a lowering
  std::vector<std::string> kernel_groups;  // "k3_add_gelu: aten::add, aten::gelu"
  std::vector<AutotuneDecision> autotune;  // also in `ir`
  bool cache_hit = false;        // the compiled library came from the cache (no compiler ran)
  bool compile_failed = false;   // fell back to eager; `failure` says why
  std::string failure;
  std::optional<TrainingReport> training;  // set when the graph runs a compiled backward
  std::optional<LayoutReport> layout;      // set when the layout pass put convolutions in oneDNN chains
  std::vector<CompiledPart> parts;         // empty: the compile is one graph
};

class CompiledGraph {
 public:
  virtual ~CompiledGraph() = default;
  virtual const CompileReport& report() const { return report_; }
  // Runs with the frame's inputs; returns the values of graph.outputs. Each kernel launch is
  // timed through the profiler given at compile time, attributed to `graph_id`.
  virtual std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs, int64_t graph_id = 0) = 0;
  // The store ids of report().parts' rows, in order: each part's kernels are attributed to its
  // own row instead of `graph_id`.
  virtual void set_part_ids(std::vector<int64_t> ids) { part_ids_ = std::move(ids); }

 protected:
  CompileReport report_;
  std::vector<int64_t> part_ids_;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // `example_inputs` are the frame inputs the graph was captured with (backends may run the graph
  // on them to learn shapes and strides). `profiler` may be null (no timing).
  virtual std::unique_ptr<CompiledGraph> compile(const CapturedGraph& graph, const std::vector<c10::IValue>& example_inputs,
                                                 CpuProfiler* profiler) = 0;
  // Whether this backend generates code for graphs on `device` (the graph's device is that of
  // its inputs and parameters). The seam a CUDA code generator fills: today the cpp backend says
  // no for anything but the CPU, and such graphs run through LibTorch with a `no_gpu_codegen` hint.
  virtual bool generates_code_for(const c10::Device& device) const { return device.is_cpu(); }
};

// The device of a graph's tensors: its first tensor input's, else its first tensor constant's
// (parameters), else the CPU.
c10::Device graph_device(const CapturedGraph& graph, const std::vector<c10::IValue>& inputs);

std::unique_ptr<Backend> make_eager_backend();
// The C++ code-generating backend. `strict`: a graph that fails to compile is an error
// (Error(Check)) instead of falling back to eager.
// `cache_dir`: empty for the process-wide kernel cache, else a private cache in that directory.
std::unique_ptr<Backend> make_cpp_backend(bool strict = false, const std::string& cache_dir = "");
struct CudaOptions {
  std::string arch;    // the architecture NVRTC compiles for ("sm_90"); empty: the GPU's own, else sm_90
  bool graphs = true;  // replay each compiled graph on a GPU as one CUDA graph (cuda_graph_replay.h)
};

// The CUDA code-generating backend (compiler/backends/cuda): a graph on a GPU runs NVRTC-compiled
// kernels; a graph on the CPU runs the same CUDA source in emulation.
std::unique_ptr<Backend> make_cuda_backend(bool strict = false, const std::string& cache_dir = "", const CudaOptions& cuda = {});
// Known backend names for --backend; throws Error(Usage) for others.
std::unique_ptr<Backend> make_backend(const std::string& name, bool strict = false, const std::string& cache_dir = "",
                                      const CudaOptions& cuda = {});

}  // namespace tcprof
