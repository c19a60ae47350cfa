#include "compiler/backends/cuda/cuda_graph_replay.h"

#include <memory>
#include <optional>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "compiler/ir/ivalue_tensors.h"
#include "core/log.h"
#include "profiler/cpu_profiler.h"

#if TCPROF_HAS_C10_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/core/StreamGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace tcprof {

#if TCPROF_HAS_C10_CUDA
namespace {

// What a capture is valid for: every tensor input's device, dtype, sizes and strides, and the
// other inputs' values.
std::string signature(const std::vector<c10::IValue>& inputs) {
  std::string s;
  for (const auto& v : inputs) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!t.defined() || !t.is_cuda()) return "";  // only CUDA tensors can be replayed into
      s += fmt::format("T{}:{}:{}:{};", t.device().str(), c10::toString(t.scalar_type()), fmt::join(t.sizes(), ","),
                       fmt::join(t.strides(), ","));
    } else if (v.isInt() || v.isDouble() || v.isBool() || v.isNone()) {
      s += fmt::format("V{};", v.isNone() ? std::string("None") : v.isInt() ? std::to_string(v.toInt())
                                                                : v.isBool() ? std::to_string(v.toBool())
                                                                             : fmt::format("{:a}", v.toDouble()));
    } else {
      return "";  // lists, tuples, strings: not compared here, so never replayed
    }
  }
  return s;
}

// Each value's own copy, tensors inside tuples and lists included: the next replay overwrites the
// graph's memory, so nothing handed out may point into it.
std::vector<c10::IValue> copies(const std::vector<c10::IValue>& values) {
  std::vector<c10::IValue> out;
  out.reserve(values.size());
  for (const auto& v : values) out.push_back(map_tensors(v, [](const at::Tensor& t) { return t.defined() ? t.clone() : t; }));
  return out;
}

struct Replay {
  GraphRun run;
  std::string name;
  CpuProfiler* profiler = nullptr;
  KernelKey replay_key;  // the replay's launch, when profiled
  std::string seen;      // the signature of the first call
  std::string captured;  // the signature of the capture, once made
  bool failed = false;
  std::vector<c10::IValue> static_inputs, static_outputs;
  std::unique_ptr<at::cuda::CUDAGraph> graph;

  std::vector<c10::IValue> call(const std::vector<c10::IValue>& inputs, int64_t graph_id) {
    const std::string sig = failed ? "" : signature(inputs);
    if (!sig.empty() && sig == captured) {
      // The whole replay is one launch of this graph: without the scope CUPTI would attribute the
      // replayed kernels to the call alone (as the H200's first replayed runs recorded them).
      std::optional<CpuProfiler::Scope> scope;
      if (profiler && profiler->enabled()) scope.emplace(*profiler, replay_key, graph_id);
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].isTensor()) static_inputs[i].toTensor().copy_(inputs[i].toTensor());
      }
      graph->replay();
      return copies(static_outputs);
    }
    if (sig.empty() || !captured.empty() || sig != seen) {
      if (seen.empty()) seen = sig;
      return run(inputs, graph_id);  // a first call, another signature, or no capture possible
    }
    capture(inputs, graph_id);
    return failed ? run(inputs, graph_id) : call(inputs, graph_id);
  }

  // Warm-up and capture on a side stream, ordered after the work queued so far and before what
  // follows on the caller's stream.
  void capture(const std::vector<c10::IValue>& inputs, int64_t graph_id) {
    static_inputs = copies(inputs);
    c10::Device device(c10::kCUDA, 0);  // the first tensor input's (signature() made them all CUDA)
    for (const auto& v : static_inputs) {
      if (v.isTensor()) {
        device = v.toTensor().device();
        break;
      }
    }
    c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream(device.index());
    c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, device.index());
    graph = std::make_unique<at::cuda::CUDAGraph>();
    // Through c10's device-generic stream calls (libc10_cuda), not the CUDA runtime's inline ones:
    // tcprof does not link libcudart itself.
    const c10::Stream side_stream = side.unwrap(), caller_stream = caller.unwrap();
    try {
      side_stream.synchronize();
      caller_stream.synchronize();
      c10::StreamGuard guard(side_stream);
      run(static_inputs, graph_id);  // warm-up on the capture stream, as torch.cuda.graphs does
      side_stream.synchronize();
      graph->capture_begin();
      try {
        static_outputs = run(static_inputs, graph_id);
      } catch (...) {
        try {
          graph->capture_end();
        } catch (...) {
        }
        throw;
      }
      graph->capture_end();
      side_stream.synchronize();
      captured = signature(inputs);
      log(LogChannel::PerfHints, "graph {} is replayed as a CUDA graph from now on", name);
    } catch (const std::exception& e) {
      failed = true;
      graph.reset();
      static_outputs.clear();
      log(LogChannel::PerfHints, "graph {} cannot be captured as a CUDA graph and runs as compiled: {}", name,
          std::string(e.what()).substr(0, std::string(e.what()).find('\n')));
    }
  }
};

}  // namespace

bool cuda_graphs_available(std::string*) { return true; }

GraphRun replay_as_cuda_graph(GraphRun run, std::string name, CpuProfiler* profiler) {
  auto state = std::make_shared<Replay>();
  state->run = std::move(run);
  state->name = std::move(name);
  state->profiler = profiler;
  if (profiler) state->replay_key = profiler->key(state->name + " cuda graph replay", "extern");
  return [state](const std::vector<c10::IValue>& inputs, int64_t graph_id) { return state->call(inputs, graph_id); };
}

#else

bool cuda_graphs_available(std::string* why_not) {
  if (why_not) *why_not = "this LibTorch is not a CUDA build";
  return false;
}

GraphRun replay_as_cuda_graph(GraphRun run, std::string, CpuProfiler*) { return run; }

#endif

}  // namespace tcprof
