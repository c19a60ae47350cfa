#include "analysis/gpu_graph_time.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/kernel_stats.h"

namespace tcprof::analysis {
namespace {

// The GPU work of one graph in one call: gaps are only meaningful inside a call (between calls the
// host runs the user's code).
struct CallWindow {
  int64_t first_start = 0, end = 0, idle_ns = 0;  // full rows: exact gaps as they arrive
  int64_t busy_ns = 0;                              // summary rows: span less busy time
  bool summarized = false;
};

CopyTime& copy_bucket(GpuGraphTime& g, const std::string& name) {
  if (name == "memcpy HtoD") return g.htod;
  if (name == "memcpy DtoH") return g.dtoh;
  return g.other_copies;
}

class Accumulator {
 public:
  void add(Id call_id, Id graph_id, const std::string& name, const std::string& kind, int64_t start,
           int64_t end, int64_t busy_ns, int64_t count, int64_t bytes, bool summarized) {
    KernelPlace place = kernel_place(stats_kind(kind, name, call_id));
    if (place == KernelPlace::Host || place == KernelPlace::OutsideCalls) return;  // no graph's GPU work
    GpuGraphTime& g = graphs_[graph_id];
    g.graph_id = graph_id;
    if (place == KernelPlace::CudaApi) {
      if (kind == "cuda_runtime" || kind == "cuda_driver") g.launch_ns += busy_ns;
      return;
    }
    if (kind == "memcpy") {
      CopyTime& c = copy_bucket(g, name);
      c.ns += busy_ns;
      c.bytes += bytes;
      c.count += count;
    } else {
      g.kernels += count;
      g.kernel_ns += busy_ns;
    }
    auto [it, fresh] = windows_.try_emplace({graph_id, call_id});
    CallWindow& w = it->second;
    if (fresh) {
      w.first_start = start;
      w.end = end;
    } else if (!summarized && start > w.end) {
      w.idle_ns += start - w.end;  // rows arrive by start time: a start past every end is a gap
    }
    w.first_start = std::min(w.first_start, start);
    w.end = std::max(w.end, end);
    w.busy_ns += busy_ns;
    w.summarized = w.summarized || summarized;
  }

  std::vector<GpuGraphTime> finish(const std::map<Id, std::string>& labels) {
    for (const auto& [key, w] : windows_) {
      GpuGraphTime& g = graphs_[key.first];
      ++g.calls;
      if (w.summarized) {
        g.idle_ns += std::max<int64_t>(0, (w.end - w.first_start) - w.busy_ns);
        g.idle_exact = false;
      } else {
        g.idle_ns += w.idle_ns;
      }
    }
    std::vector<GpuGraphTime> out;
    for (auto& [id, g] : graphs_) {
      if (g.gpu_ns() == 0 && g.kernels == 0 && g.htod.count + g.dtoh.count + g.other_copies.count == 0) {
        continue;  // API calls alone (CUPTI's own start-up, allocator calls): no GPU work
      }
      auto label = labels.find(id);
      if (label != labels.end()) g.compile_label = label->second;
      out.push_back(std::move(g));
    }
    return out;
  }

 private:
  std::map<Id, GpuGraphTime> graphs_;
  std::map<std::pair<Id, Id>, CallWindow> windows_;  // (graph, call)
};

}  // namespace

std::vector<GpuGraphTime> gpu_graph_times(const RunReader& reader, Id run_id) {
  Accumulator acc;
  reader.for_each_kernel(run_id, [&](const KernelRow& k) {
    acc.add(k.call_id, k.graph_id, k.name, k.kind, k.start_ns, k.start_ns + k.duration_ns, k.duration_ns,
            1, k.bytes, false);
  });
  for (const auto& s : reader.kernel_summaries(run_id)) {
    acc.add(s.call_id, s.graph_id, s.name, s.kind, s.start_ns, s.end_ns, s.total_ns, s.count, s.bytes, true);
  }
  std::map<Id, std::string> labels;
  for (const auto& t : reader.graph_kernel_times(run_id)) labels.emplace(t.graph_id, t.compile_label);
  return acc.finish(labels);
}

GpuCallCoverage gpu_call_coverage(const std::vector<std::pair<std::string, int64_t>>& counters) {
  GpuCallCoverage c;
  for (const auto& [name, value] : counters) {
    if (name == "cupti.calls_recorded") c.recorded += value;
    else if (name == "cupti.calls_skipped") c.skipped += value;
  }
  return c;
}

std::string GpuCallCoverage::text() const {
  if (!sampled()) return {};
  return fmt::format("GPU work recorded on {} of {} calls: --profile summary records a run's first calls, then one "
                     "call in TCPROF_SUMMARY_GPU_EVERY (20 by default); GPU totals and counts cover those calls, and every "
                     "call is timed. --profile full records every call.",
                     recorded, recorded + skipped);
}

int64_t peak_gpu_bytes(const std::vector<CallRow>& calls) {
  int64_t peak = 0;
  for (const auto& c : calls) peak = std::max(peak, c.peak_gpu_bytes);
  return peak;
}

}  // namespace tcprof::analysis
