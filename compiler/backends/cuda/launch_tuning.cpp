#include "compiler/backends/cuda/launch_tuning.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "compiler/toolchain/cache_files.h"
#include "compiler/toolchain/kernel_library.h"
#include "core/log.h"
#include "core/sha256.h"

namespace tcprof {
namespace {

namespace fs = std::filesystem;
constexpr const char* kHeader = "tcprof-launch 1";
constexpr int kRounds = 3;

// The blocks tried beside the default: for a pointwise kernel its threads, for a warp-row kernel
// the warps (rows) a block holds, from 2 to 32.
constexpr unsigned kPointwiseBlocks[] = {128, 512, 1024};
constexpr unsigned kWarpRowBlocks[] = {64, 128, 512, 1024};

fs::path file_of(const std::string& cache_dir, const std::string& key) {
  return fs::path(cache_dir) / "launches" / key.substr(0, 2) / (key + ".txt");
}

std::optional<LaunchDecision> load_decision(const std::string& cache_dir, const std::string& key,
                                            const std::vector<LaunchShape>& candidates) {
  if (cache_dir.empty()) return std::nullopt;
  std::ifstream in(file_of(cache_dir, key));
  std::string line;
  if (!in || !std::getline(in, line) || line != kHeader) return std::nullopt;
  LaunchDecision d;
  d.from_cache = true;
  if (!std::getline(in, line)) return std::nullopt;
  std::istringstream head(line);
  std::string word;
  if (!(head >> word >> d.decision.winner >> d.decision.margin >> d.decision.gain) || word != "chosen") return std::nullopt;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    LaunchShape s;
    RaceEntry e;
    if (!(fields >> s.grid >> s.block >> e.ran >> e.best_ns >> e.noise)) return std::nullopt;
    d.candidates.push_back(s);
    d.entries.push_back(e);
  }
  // Only what the kernel would try now: another version's sizes, or a hand edit, are re-timed.
  if (d.candidates.size() != candidates.size() || d.decision.winner < 0 ||
      d.decision.winner >= static_cast<int>(candidates.size())) {
    return std::nullopt;
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!(d.candidates[i] == candidates[i])) return std::nullopt;
  }
  // A winner that never ran (a hand edit) could be a size the kernel cannot launch with.
  if (!d.entries[static_cast<size_t>(d.decision.winner)].ran) return std::nullopt;
  return d;
}

// Best effort: a folder that cannot be written costs a timing next time, never the launch.
void store_decision(const std::string& cache_dir, const std::string& key, const LaunchDecision& d) {
  if (cache_dir.empty()) return;
  std::string text = fmt::format("{}\nchosen {} {} {}\n", kHeader, d.decision.winner, d.decision.margin, d.decision.gain);
  for (size_t i = 0; i < d.candidates.size(); ++i) {
    text += fmt::format("{} {} {} {} {}\n", d.candidates[i].grid, d.candidates[i].block, d.entries[i].ran ? 1 : 0,
                        d.entries[i].best_ns, d.entries[i].noise);
  }
  const fs::path path = file_of(cache_dir, key);
  try {
    ensure_dir(path.parent_path().string());
    write_file_atomic(path.string(), text);
  } catch (const KernelLibraryError&) {
  }
}

std::string shape_text(const LaunchShape& s) { return fmt::format("block {} (grid {})", s.block, s.grid); }

std::string entry_text(const RaceEntry& e) {
  if (!e.ran) return "refused";
  return fmt::format("{:.1f} us ±{:.0f}%", static_cast<double>(e.best_ns) / 1e3, e.noise * 100);
}

}  // namespace

std::vector<LaunchShape> launch_candidates(const CudaKernelSymbol& kernel, const int64_t* sizes, const LaunchLimits& limits) {
  std::vector<LaunchShape> out{launch_shape(kernel, sizes, limits)};
  // One block holds the whole space: another block size only moves idle threads. A column kernel's
  // block and grid order its sums.
  if (out[0].grid <= 1 || kernel.column) return out;
  auto add = [&](LaunchLimits l) {
    const LaunchShape s = launch_shape(kernel, sizes, l);
    for (const LaunchShape& c : out) {
      if (c == s) return;
    }
    out.push_back(s);
  };
  if (kernel.row) {
    // A row reduced by the whole block is summed in an order its block sets.
    if (sizes[kernel.rank - 1] > kWarpRowMax) return out;
    for (unsigned b : kWarpRowBlocks) {
      LaunchLimits l = limits;
      l.warp_row_block = b;
      l.max_row_block = std::max(l.max_row_block, b);
      add(l);
    }
  } else {
    for (unsigned b : kPointwiseBlocks) {
      LaunchLimits l = limits;
      l.pointwise_block = b;
      add(l);
    }
  }
  return out;
}

std::string launch_decision_text(const LaunchDecision& d) {
  std::string sizes;
  for (int64_t s : d.sizes) sizes += (sizes.empty() ? "" : "x") + std::to_string(s);
  const size_t w = static_cast<size_t>(d.decision.winner);
  std::string text = fmt::format("{}[{}]: {} {}", d.kernel, sizes, shape_text(d.candidates[w]), entry_text(d.entries[w]));
  text += w == 0 ? fmt::format(", the default kept (margin {:.0f}%)", d.decision.margin * 100)
                 : fmt::format(", {:.0f}% faster than the default (margin {:.0f}%)", d.decision.gain * 100, d.decision.margin * 100);
  std::string others;
  for (size_t i = 0; i < d.candidates.size(); ++i) {
    if (i != w) others += fmt::format("{}{} {}", others.empty() ? "" : "; ", shape_text(d.candidates[i]), entry_text(d.entries[i]));
  }
  text += "; tried " + others;
  if (d.from_cache) text += " (from the cache)";
  return text;
}

LaunchTuner::LaunchTuner(std::string device, std::string cache_dir) : device_(std::move(device)), cache_dir_(std::move(cache_dir)) {}

std::string LaunchTuner::key_of(const CudaKernelSymbol& kernel, const int64_t* sizes, const int64_t* strides,
                                uint64_t aligned, const LaunchLimits& limits) const {
  std::string material = fmt::format("{}\n{}\n{} {} {} {}\naligned {:x}\n", device_, kernel.symbol, limits.pointwise_block,
                                     limits.warp_row_block, limits.max_row_block, limits.max_grid, aligned);
  for (int d = 0; d < kernel.rank; ++d) material += fmt::format("{} ", sizes[d]);
  material += "/";
  for (int i = 0; i < kernel.inputs * kernel.rank; ++i) material += fmt::format(" {}", strides[i]);
  return sha256_hex(material);
}

LaunchTuner::Choice LaunchTuner::choose(const CudaKernelSymbol& kernel, const int64_t* sizes, const int64_t* strides,
                                        uint64_t aligned, const LaunchLimits& limits, const LaunchClock& clock) {
  const std::vector<LaunchShape> candidates = launch_candidates(kernel, sizes, limits);
  if (candidates.size() < 2) return {candidates[0], true};
  const std::string key = key_of(kernel, sizes, strides, aligned, limits);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = chosen_.find(key); it != chosen_.end()) return {it->second, true};
  }
  std::optional<LaunchDecision> decision = load_decision(cache_dir_, key, candidates);
  if (!decision) {
    if (!clock.ready || !clock.ready()) return {candidates[0], false};
    // The race reads the device's clock: the time of each candidate's launches, summed.
    int64_t device_ns = 0;
    std::vector<std::function<bool()>> runs;
    for (const LaunchShape& shape : candidates) {
      runs.emplace_back([&clock, &device_ns, shape] {
        std::optional<int64_t> t = clock.time(shape, kLaunchesPerRound);
        if (!t) return false;
        device_ns += *t;
        return true;
      });
    }
    RaceOptions options;
    options.rounds = kRounds;
    options.floor = kMargin;
    options.clock = [&device_ns] { return device_ns; };
    decision.emplace();
    decision->candidates = candidates;
    decision->decision = race(runs, options, &decision->entries);
    for (RaceEntry& e : decision->entries) e.best_ns /= kLaunchesPerRound;
    if (!decision->entries[static_cast<size_t>(decision->decision.winner)].ran) return {candidates[0], false};  // none ran
    store_decision(cache_dir_, key, *decision);
  }
  decision->kernel = kernel.symbol;
  decision->sizes.assign(sizes, sizes + kernel.rank);
  const LaunchShape shape = candidates[static_cast<size_t>(decision->decision.winner)];
  if (log_enabled(LogChannel::Autotune)) log(LogChannel::Autotune, "cuda launch {}", launch_decision_text(*decision));
  std::lock_guard<std::mutex> lock(mu_);
  chosen_.emplace(key, shape);
  decisions_.push_back(std::move(*decision));
  return {shape, true};
}

std::vector<LaunchDecision> LaunchTuner::decisions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return decisions_;
}

}  // namespace tcprof
