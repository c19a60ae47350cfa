// Launch sizes tuned per kernel on the device: the first launch of a generated kernel over a new
// index space races a few block sizes (autotune_race.h's rounds, noise and margin, on the device's
// own clock) and every later launch over that space uses the winner. Decisions are kept in memory
// and beside the kernel cache (<cache_dir>/launches/<k[0:2]>/<k>.txt), keyed by the device, the
// kernel's content, the index space and the limits, so a warm start times nothing. Only sizes that
// cannot change a result are tried: a pointwise kernel's block and the rows a block of a warp-row
// kernel holds; a row reduced by a whole block keeps its block, which orders the row's sum, and a
// column kernel its launch shape, which orders its column sums. A
// stored decision only picks among those, so a damaged file costs speed, never results. No CUDA, no
// LibTorch.
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/backends/cpp/run/autotune_race.h"
#include "compiler/backends/cuda/cuda_launch.h"

namespace tcprof {

// The shapes a launch may take, the default (launch_shape) first; fewer than two: nothing to tune.
std::vector<LaunchShape> launch_candidates(const CudaKernelSymbol& kernel, const int64_t* sizes, const LaunchLimits& limits);

// How the tuner times a kernel where it runs.
struct LaunchClock {
  // Whether timing may run now (not while the stream is captured into a CUDA graph).
  std::function<bool()> ready;
  // Nanoseconds for `launches` launches in this shape back to back; nothing when it was refused.
  std::function<std::optional<int64_t>(const LaunchShape& shape, int launches)> time;
};

struct LaunchDecision {
  std::string kernel;  // the kernel's symbol
  std::vector<int64_t> sizes;
  std::vector<LaunchShape> candidates;
  std::vector<RaceEntry> entries;  // per candidate, its time per launch
  RaceDecision decision;
  bool from_cache = false;  // read back from the cache folder, not timed in this process
};

// "tcu_…[2048x512]: block 128 (grid 2048) 11.2 us ±1%, 9% faster than the default (margin 5%); tried …"
std::string launch_decision_text(const LaunchDecision& d);

class LaunchTuner {
 public:
  // `device` names what the timings hold for (the GPU, its SMs, the architecture compiled for, the
  // NVRTC version, the kernels' prelude); `cache_dir` empty keeps decisions for this process only.
  LaunchTuner(std::string device, std::string cache_dir);

  struct Choice {
    LaunchShape shape;
    bool decided = false;  // false: the default for now (the clock was not ready), to be tuned later
  };
  // The shape to launch `kernel` over this index space (`strides`: rank per input; `aligned`: bit i
  // set where operand i, inputs then outputs, is 16-byte aligned, which picks its vector path) with:
  // decided before, read from the cache folder or raced now. The default, decided, when there is
  // nothing to tune; undecided when the clock is not ready or no candidate ran.
  Choice choose(const CudaKernelSymbol& kernel, const int64_t* sizes, const int64_t* strides, uint64_t aligned,
                const LaunchLimits& limits, const LaunchClock& clock);

  // Every decision made or read so far, in order (for tests and the autotune log).
  std::vector<LaunchDecision> decisions() const;

  static constexpr int kLaunchesPerRound = 4;  // a round times this many launches between two events
  static constexpr double kMargin = 0.05;      // a block displaces the default by 5% or its noise

 private:
  std::string key_of(const CudaKernelSymbol& kernel, const int64_t* sizes, const int64_t* strides, uint64_t aligned,
                     const LaunchLimits& limits) const;

  std::string device_, cache_dir_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, LaunchShape> chosen_;
  std::vector<LaunchDecision> decisions_;
};

}  // namespace tcprof
