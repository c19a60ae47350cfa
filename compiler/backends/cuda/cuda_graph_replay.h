// A compiled graph on a GPU replayed as one CUDA graph, as torch.compile's "reduce-overhead" mode
// does: the first call runs it as compiled (warming up cuBLAS and the caches); the second call with
// the same input shapes, strides, dtypes and device captures it on a side stream into static input
// buffers; later calls with that signature copy their inputs in and replay it, one launch for the
// whole graph instead of one per kernel. Other signatures run as compiled. Outputs are copies of
// the static ones, so a caller may keep them across calls. A graph whose capture fails (a host
// sync, an op CUDA graphs do not allow) runs as compiled from then on, said once in the log.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

namespace tcprof {

class CpuProfiler;

using GraphRun = std::function<std::vector<c10::IValue>(const std::vector<c10::IValue>&, int64_t)>;

// Whether this LibTorch can capture CUDA graphs (a CUDA build); else why not.
bool cuda_graphs_available(std::string* why_not);

// `run` wrapped for replay; `run` itself where CUDA graphs are not available. With a profiler, each
// replay is a launch of the graph (`name` + " cuda graph replay", on the host): the profiler times
// it, and the CUPTI collector attributes the replayed kernels to the call and the graph.
GraphRun replay_as_cuda_graph(GraphRun run, std::string name, CpuProfiler* profiler = nullptr);

}  // namespace tcprof
