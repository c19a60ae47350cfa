// Runs a lowered program: extern steps as LibTorch calls, kernels through the loaded library.
// Before each kernel call the runtime computes the index space from the actual tensors (so
// dynamic dimensions just work), checks that the layouts fit what the kernel was generated for,
// and otherwise runs that kernel's ops through LibTorch (counted, never wrong).
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "compiler/ir/captured_graph.h"
#include "compiler/backends/cpp/run/autotune_cache.h"
#include "compiler/backends/cpp/run/linear_gemm.h"
#include "compiler/backends/cpp/run/onednn_convolution.h"
#include "compiler/backends/cpp/schedule/schedule_fusion.h"
#include "profiler/cpu_profiler.h"

namespace tcprof {

class LoadedLibrary;
using KernelFn = void (*)(const void* const*, void* const*, const int64_t*, const int64_t*);
// One generated kernel's call: a loaded CPU function, or a CUDA launch (on a device or emulated).
// False when it cannot run these operands (a CUDA argument block too large): the runner then runs
// the kernel's ops through LibTorch.
using KernelCall = std::function<bool(const void* const* in, void* const* out, const int64_t* sizes, const int64_t* strides)>;

class ProgramRunner {
 public:
  // `kernel_calls` per program kernel, `window_fns` the loaded symbols per native kernel. Kernel
  // operands and outputs live on `device` (a CUDA program's; its kernels' ops run through
  // LibTorch when an operand is elsewhere).
  ProgramRunner(CapturedGraph graph, ScheduledProgram program, std::shared_ptr<LoadedLibrary> library,
                std::vector<KernelCall> kernel_calls, std::vector<KernelFn> window_fns, CpuProfiler* profiler,
                c10::Device device = c10::Device(c10::kCPU));
  std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs, int64_t graph_id);
  // Kernel calls that ran through LibTorch because the layouts did not fit.
  int64_t layout_fallbacks() const { return layout_fallbacks_; }
  // Races each directly generated or specially chosen kernel (depthwise conv, max pool, 1x1 GEMM,
  // prepacked conv) against the LibTorch op it replaces on the example values (autotune_race.h).
  std::vector<AutotuneChoice> measure_autotune(const std::vector<c10::IValue>& example_slots, const SymBindings& bindings);
  // Keeps each pair's winner, measured now or read from the autotune cache. Returns one line per
  // decision (times, noise, margin), for the IR record.
  std::vector<AutotuneDecision> use_autotune(const std::vector<AutotuneChoice>& choices);
  // Every parameter the direct kernels' timings depend on, for the autotune cache key.
  std::string autotune_signature() const;
  // One kernel's parameters (everything its timing depends on but its name).
  std::string window_signature(const WindowKernel& k) const;
  size_t direct_kernels() const { return program_.program.window_kernels.size(); }
  // The oneDNN chains: every ChainFormat raced over whole runs of the graph on the example inputs
  // (autotune_race.h: the untimed run alone for runs over 0.25 s, no layout past the first for runs
  // over 1 s; unmeasured where this oneDNN cannot build it); oneDNN's own choice stays unless
  // another beats it by the margin. Returns the IR record's line. Every parameter the timings
  // depend on, for the cache key.
  std::vector<AutotuneChoice> measure_chain_formats(const std::vector<c10::IValue>& inputs);
  AutotuneDecision use_chain_format(const std::vector<AutotuneChoice>& choices, bool cached);
  std::string chain_signature() const;
  const ScheduledProgram& program() const { return program_; }
  const CapturedGraph& graph() const { return graph_; }

 private:
  struct KernelPlan;
  void run_extern(int op, std::vector<c10::IValue>& slots, const SymBindings& bindings);
  bool run_kernel(size_t k, std::vector<c10::IValue>& slots);
  bool run_window_kernel(size_t k, std::vector<c10::IValue>& slots);
  bool run_attention(size_t k, std::vector<c10::IValue>& slots);
  bool run_gemm(size_t k, std::vector<c10::IValue>& slots);
  bool run_multi_head_attention(size_t k, std::vector<c10::IValue>& slots);
  bool run_scaled_dot_product_attention(size_t k, std::vector<c10::IValue>& slots);
  at::Tensor launch_attention(size_t k, const at::Tensor& q, const at::Tensor& kt, const at::Tensor& v);
  bool run_onednn(size_t k, std::vector<c10::IValue>& slots, std::vector<BlockedValue>& blocked);
  bool run_channel_op(size_t k, std::vector<c10::IValue>& slots, std::vector<BlockedValue>& blocked);
  void plan_releases();
  void build_chain(ChainFormat format);

  CapturedGraph graph_;
  ScheduledProgram program_;
  std::shared_ptr<LoadedLibrary> library_;
  std::vector<KernelCall> kernel_calls_;
  std::vector<KernelFn> window_fns_;
  c10::Device device_;
  std::vector<torch::jit::Operation> operations_;  // per op of graph_
  std::vector<std::vector<std::vector<int>>> output_inputs_;  // per kernel, per output: inputs it reads
  CpuProfiler* profiler_;
  std::vector<KernelKey> step_keys_;
  KernelKey window_step_key(size_t k) const;  // window kernel k's step in the profile
  int64_t layout_fallbacks_ = 0;
  bool measuring_ = false;  // autotune runs: not recorded by the profiler
  std::vector<bool> window_uses_extern_;  // per native kernel: autotune chose the LibTorch op
  // Per window kernel, its weights prepared for the GEMM (run/linear_gemm.h): a LinearGemm's in
  // [0]; nn.MultiheadAttention's QKV projection in [0] and output projection in [1]. Made when the
  // kernel is first measured or run, dropped where the autotune phase keeps LibTorch's op.
  using PreparedLinears = std::array<std::shared_ptr<const PreparedLinear>, 2>;
  std::vector<PreparedLinears> prepared_linears_;
  // Per window kernel, the GEMM method its linears run (LinearGemmMethod; -1: the planned one).
  std::vector<int> gemm_method_;
  const PreparedLinear& prepared_linear(size_t k, int which);
  bool has_prepared_linears(size_t k) const;
  void prepare_linears(size_t k);  // every weight kernel k runs a GEMM against
  // Kernel k's generated bias + activation pass after its GEMM, or null.
  LinearEpilogueFn linear_epilogue(size_t k) const;
  // The GEMM methods kernel k's linears may take (linear_gemm_methods), the planned one first.
  std::vector<LinearGemmMethod> gemm_methods(size_t k) const;
  // Kernel k's linears prepared for `method` (std::runtime_error where it cannot run them).
  PreparedLinears make_prepared_linears(size_t k, std::optional<LinearGemmMethod> method) const;
  std::vector<std::vector<int>> release_after_;  // per step: slots no later step uses
};

}  // namespace tcprof
