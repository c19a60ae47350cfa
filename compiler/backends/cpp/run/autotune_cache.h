// Autotune decisions kept beside the kernel cache, so a warm start does not time every direct
// kernel against LibTorch again (resnet18: most of a 0.47 s warm start). A decision is keyed by
// everything its timing depends on: the kernels' parameters and weight shapes, the generated
// source, the compiler flags (ISA), the thread count and the LibTorch version. Files are
// <cache_dir>/autotune/<k[0:2]>/<k>.txt; a missing, stale or damaged file only means re-timing, and
// a decision only picks between two correct implementations (a bad file costs speed, never results).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tcprof {

// One GEMM method's time where a kernel's linears raced several (LinearGemmMethod, as its int).
struct GemmMethodTime {
  int method = 0;
  int64_t ns = 0;
  double noise = 0;
};

// One decision (autotune_race.h): a direct kernel against LibTorch's op, or one chain layout's time.
struct AutotuneChoice {
  bool measured = false;  // false: the kernel could not run on the example inputs (kept as planned)
  int64_t kernel_ns = 0, libtorch_ns = 0;  // kernel: the chosen GEMM method's, where several raced
  bool use_libtorch = false;
  double kernel_noise = 0, libtorch_noise = 0;  // spread of the rounds, median over best
  double margin = 0;  // what the winner had to beat the planned candidate by (or the planned one kept)
  int gemm_method = -1;  // a kernel with prepared linears: the GEMM method it runs (-1: its planned one)
  std::vector<GemmMethodTime> gemm_times{};  // every GEMM method raced, where there were several
};

std::string autotune_key(const std::string& material);
// The decisions stored under `key`, if there are exactly `count` of them and the file is intact.
std::optional<std::vector<AutotuneChoice>> load_autotune(const std::string& cache_dir, const std::string& key,
                                                         size_t count);
// Best effort (temporary file + rename, owner-only folders): a cache that cannot be written costs a
// re-timing next time, never the compile. Returns false when nothing was stored.
bool store_autotune(const std::string& cache_dir, const std::string& key, const std::vector<AutotuneChoice>& choices);

}  // namespace tcprof
