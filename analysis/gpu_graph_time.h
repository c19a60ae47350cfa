// Per graph of a CUDA run: what the GPU did for it (kernels and fills, copies each way with their
// bytes), what launching it cost the host (CUDA API calls made inside its launch scope), and how
// long the GPU sat idle between its work within a call. `report --kernels` and the GUI show these.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/run_reader.h"

namespace tcprof::analysis {

struct CopyTime {
  int64_t ns = 0, bytes = 0, count = 0;
};

struct GpuGraphTime {
  Id graph_id = 0;            // 0: GPU work outside any graph (eager code between graphs)
  std::string compile_label;  // the graph's compile, e.g. "0/1"; empty outside graphs
  int64_t calls = 0;          // calls in which the graph put work on the GPU
  int64_t kernels = 0, kernel_ns = 0;  // kernels and fills, time on the GPU
  CopyTime htod, dtoh, other_copies;  // other: device to device, peer, host to host
  int64_t launch_ns = 0;  // CUDA runtime and driver calls on the host
  // Gaps between the graph's GPU work in each call, summed: the GPU waiting for the host. Exact
  // with --profile full; with summary rows (per-launch times not kept) it is the call's GPU span
  // less its busy time, a lower bound when streams overlap.
  int64_t idle_ns = 0;
  bool idle_exact = true;
  int64_t gpu_ns() const { return kernel_ns + htod.ns + dtoh.ns + other_copies.ns; }
};

// Graphs with GPU work, in graph id order (GPU work outside graphs first). Empty for a CPU run.
std::vector<GpuGraphTime> gpu_graph_times(const RunReader& reader, Id run_id);

// How many of a CUDA run's calls had their GPU work recorded (CUPTI's cupti.calls_recorded and
// cupti.calls_skipped counters): `--profile summary` records a run's first calls and then one in
// TCPROF_SUMMARY_GPU_EVERY (profiler/gpu_call_sampling.h). Both 0 for a run recorded before the
// counters existed (every call recorded) or without CUPTI.
struct GpuCallCoverage {
  int64_t recorded = 0, skipped = 0;
  bool sampled() const { return skipped > 0; }
  // "GPU work recorded on 15 of 100 calls …" for a sampled run, empty otherwise: report and GUI
  // say the same.
  std::string text() const;
};
GpuCallCoverage gpu_call_coverage(const std::vector<std::pair<std::string, int64_t>>& counters);

// The highest CUDA caching allocator peak over the run's calls; 0 when none was measured.
int64_t peak_gpu_bytes(const std::vector<CallRow>& calls);

}  // namespace tcprof::analysis
