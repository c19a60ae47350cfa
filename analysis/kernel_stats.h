// Kernel statistics: the columns of nsys `cuda_gpu_kern_sum` per kernel name and device, computed
// one way for every reader (`report --kernels`, `diff`, the GUI's kernel table, for a whole run or
// a time range). --profile summary rows count in fully; for the median each stands for `count`
// launches of its mean duration (the launches themselves were not kept).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/run_reader.h"

namespace tcprof::analysis {

struct KernelStats {
  std::string name, kind, device;
  int64_t instances = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  double avg_ns = 0, median_ns = 0, stddev_ns = 0;  // stddev: the sample one, as nsys reports it
  double time_percent = 0;  // of all kernel time in the selection
};

// Accumulates launches into statistics. Readers that intern names resolve a group once with
// group() and add by index, so a million launches cost no hashing.
class KernelStatsBuilder {
 public:
  size_t group(std::string_view name, std::string_view kind, std::string_view device);
  void add(size_t group, int64_t duration_ns);
  // A --profile summary row: `count` launches totalling `total_ns`.
  void add_folded(size_t group, int64_t count, int64_t total_ns, int64_t min_ns, int64_t max_ns,
                  double sum_sq_ns2);
  // Groups with at least one launch, largest total first (then by name).
  std::vector<KernelStats> finish();

 private:
  struct Acc {
    KernelStats stats;
    std::vector<int64_t> singles;
    std::vector<std::pair<double, int64_t>> folded;  // (mean duration, launches)
    double sum_sq = 0;
  };
  std::vector<Acc> accs_;
  std::unordered_map<std::string, size_t> index_;
};

// Where a row's time was spent. GPU work (kernels, copies, fills) is time on the device; host
// kernels are tcprof's CPU kernels and eager ops; CUDA API calls are host time spent asking the
// driver. They are never ranked together: a one-off 113 ms cudaDeviceGetStreamPriorityRange
// outranked every GPU kernel when they were.
//
// Copies to the GPU made outside every call (call_id 0) are a place of their own: the inputs that
// `run`, `bench` and `train` copy to the device before each call, targets, weights moved when the
// model loads. They are real GPU time but no call's, so they are shown apart and never ranked with
// the model's work (a ResNet18 run's 19 MB input copy was 51% of its "GPU time" and its slowest
// "kernel"). Other GPU work without a call stays GPU work: LibTorch's autograd launches a CUDA
// backward from its own thread, which no call scope reaches, and it is the step's work.
enum class KernelPlace { Gpu, Host, CudaApi, OutsideCalls };
KernelPlace kernel_place(std::string_view kind);
const char* place_name(KernelPlace place);  // "gpu", "host", "cuda_api", "outside_calls"

// The kind statistics group a row under: its own, or kOutsideCallsKind for a host-to-device copy
// outside every call. Every reader that builds statistics from rows passes them through this.
inline constexpr std::string_view kOutsideCallsKind = "outside_calls";
std::string_view stats_kind(std::string_view kind, std::string_view name, Id call_id);

// The rows of one place, largest first, with time_percent recomputed within that place.
std::vector<KernelStats> stats_of_place(const std::vector<KernelStats>& all, KernelPlace place);

// Whole run, or only kernels starting in `range`.
std::vector<KernelStats> kernel_stats(const RunReader& reader, Id run_id,
                                      std::optional<TimeRange> range = {});

}  // namespace tcprof::analysis
