// The eager backend: runs a captured graph op by op with LibTorch's own kernels. It is the
// reference the compiled backends are checked against, and the fallback when they cannot compile.
#include <fmt/format.h>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "compiler/backends/backend.h"
#include "compiler/ir/op_dispatch.h"
#include "compiler/frontend/guards.h"
#include "profiler/cpu_profiler.h"
#include "core/error.h"

namespace tcprof {

namespace {

class EagerGraph : public CompiledGraph {
 public:
  EagerGraph(const CapturedGraph& graph, CpuProfiler* profiler) : graph_(graph), profiler_(profiler) {
    for (const auto& op : graph_.ops) {
      operations_.push_back(op_operation(op));
      // Every op runs as LibTorch's own kernel: an "eager" kernel in the profile.
      if (profiler_) keys_.push_back(profiler_->key(op.name, "eager"));
    }
  }

  std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs, int64_t graph_id) override {
    std::vector<c10::IValue> slots(static_cast<size_t>(graph_.num_slots));
    std::copy(inputs.begin(), inputs.end(), slots.begin());
    InputBindings bindings(inputs);
    torch::jit::Stack stack;
    for (size_t i = 0; i < graph_.ops.size(); ++i) {
      const GraphOp& op = graph_.ops[i];
      stack.clear();
      for (const Arg& arg : op.args) stack.push_back(evaluate_arg(arg, slots, bindings));
      try {
        if (profiler_ && profiler_->enabled()) {
          auto timed = profiler_->time(keys_[i], graph_id);
          operations_[i](stack);
        } else {
          operations_[i](stack);
        }
      } catch (const c10::Error& e) {
        throw Error(ErrorKind::Input, fmt::format("{} at {}:{} failed: {}", op.name, op.loc.file,
                                                  op.loc.line, e.what_without_backtrace()));
      }
      for (size_t o = 0; o < op.outputs.size(); ++o) slots[static_cast<size_t>(op.outputs[o])] = std::move(stack[o]);
    }
    std::vector<c10::IValue> out;
    out.reserve(graph_.outputs.size());
    for (int slot : graph_.outputs) out.push_back(slots[static_cast<size_t>(slot)]);
    return out;
  }

 private:
  const CapturedGraph& graph_;
  CpuProfiler* profiler_;
  std::vector<torch::jit::Operation> operations_;
  std::vector<KernelKey> keys_;
};

class EagerBackend : public Backend {
 public:
  std::string name() const override { return "eager"; }
  bool generates_code_for(const c10::Device&) const override { return true; }  // LibTorch runs anywhere
  std::unique_ptr<CompiledGraph> compile(const CapturedGraph& graph, const std::vector<c10::IValue>&,
                                         CpuProfiler* profiler) override {
    return std::make_unique<EagerGraph>(graph, profiler);
  }
};

}  // namespace

std::unique_ptr<Backend> make_eager_backend() { return std::make_unique<EagerBackend>(); }

std::unique_ptr<Backend> make_backend(const std::string& name, bool strict, const std::string& cache_dir,
                                      const CudaOptions& cuda) {
  if (name == "eager") return make_eager_backend();
  if (name == "cpp") return make_cpp_backend(strict, cache_dir);
  if (name == "cuda") return make_cuda_backend(strict, cache_dir, cuda);
  throw Error(ErrorKind::Usage, fmt::format("unknown backend '{}' (available: cpp, cuda, eager)", name));
}

c10::Device graph_device(const CapturedGraph& graph, const std::vector<c10::IValue>& inputs) {
  for (const auto& v : inputs) {
    if (v.isTensor()) return v.toTensor().device();
  }
  for (const auto& op : graph.ops) {
    for (const auto& a : op.args) {
      if (a.kind == Arg::Kind::Constant && a.constant.isTensor()) return a.constant.toTensor().device();
    }
  }
  return c10::Device(c10::kCPU);
}

}  // namespace tcprof
