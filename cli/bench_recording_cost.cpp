// `tcprof bench MODEL --recording-cost`: what recording costs the calls it records, measured in one
// process. The compiled module runs under --profile off, summary and full (and summary with the CPU
// timers alone, which splits the CUPTI collector's share from the host profiler's), each with a
// recording of its own into a scratch database, in blocks that take turns so that a machine or a GPU
// clock that drifts hits every mode alike. Each call's time is the one `run` records
// (CompiledModule::last_call_ns: CUDA events on a GPU), so the overheads are those of `run`.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "analysis/statistics.h"
#include "cli/bench_command.h"
#include "cli/model_command.h"
#include "compiler/runtime/compiled_module.h"
#include "compiler/runtime/torch_info.h"
#include "core/error.h"
#include "core/run_writer.h"
#include "profiler/cpu_profiler.h"
#include "profiler/gpu_recording.h"

namespace tcprof::cli {
namespace {

struct Recording {
  Recording(std::string label_, ProfileMode mode_, bool gpu_) : label(std::move(label_)), mode(mode_), gpu(gpu_) {}
  std::string label;  // off, summary, full, summary (host timers only)
  ProfileMode mode;
  bool gpu;  // starts the CUPTI collector for its blocks (a CUDA run)
  // Which calls record GPU work, counted over all the recording's blocks as over one run's calls.
  std::shared_ptr<GpuCallSampling> sampling;
  int64_t timed_gpu_recorded = 0;  // timed calls whose GPU work CUPTI recorded
  std::unique_ptr<RunWriter> writer;
  std::unique_ptr<CpuProfiler> profiler;
  std::unique_ptr<CompiledModule> module;
  std::vector<int64_t> call_ns;
  int64_t calls = 0;       // warm-up included
  uint64_t rows = 0;       // rows the recording wrote, all calls together
  std::string gpu_problem;  // why the collector did not start, once
};

// Runs `calls` calls of one recording, its collector started for the block and stopped after it,
// as a `run` of that many calls would. A timed block starts with two untimed calls: starting and
// stopping collectors leaves the GPU idle for a while, and its clocks drop (on an H200 the first
// calls of each block then measured up to 30% slower, whatever the mode).
void run_block(Recording& r, const std::vector<c10::IValue>& inputs, int calls, bool timed) {
  constexpr int kSettleCalls = 2;
  std::shared_ptr<LaunchObserver> collector;
  if (r.gpu) {
    std::string why;
    collector = start_gpu_recording(*r.writer, r.mode, &why, r.sampling);
    if (!collector && r.gpu_problem.empty()) r.gpu_problem = why;
    r.profiler->set_launch_observer(collector.get());
  }
  for (int i = 0; i < calls + (timed ? kSettleCalls : 0); ++i) {
    const int64_t recorded = r.sampling ? r.sampling->calls_recorded() : 0;
    r.module->call(inputs);
    ++r.calls;
    if (timed && i >= kSettleCalls) {
      r.call_ns.push_back(r.module->last_call_ns());
      if (r.sampling && collector) r.timed_gpu_recorded += r.sampling->calls_recorded() - recorded;
    }
  }
  r.profiler->set_launch_observer(nullptr);
  collector.reset();  // stops the collector: its records are written before the next block starts
}

}  // namespace

void run_recording_cost_bench(const TrainBenchOptions& o, int block_calls) {
  if (o.threads < 1 || o.iters < 1 || o.warmup < 0 || block_calls < 1) {
    throw Error(ErrorKind::Usage, "--threads, --iters and --block must be at least 1");
  }
  set_intra_op_threads(o.threads);
  ModelSession s = open_model_session(o.model, "bench",
                                      config_json(o.model, fmt::format("{{\"iters\":{},\"recording_cost\":true}}", o.iters)));
  auto inputs = s.inputs->make(0);
  torch::NoGradGuard no_grad;
  const bool cuda = s.device.is_cuda();
  const std::string scratch = temp_cache_dir();  // the recordings' databases and the kernel cache
  CompileOptions options = s.compile;
  if (options.backend != "eager") options.kernel_cache_dir = scratch + "/kernels";

  std::vector<Recording> recordings;
  recordings.emplace_back("off", ProfileMode::Off, false);
  recordings.emplace_back("summary", ProfileMode::Summary, cuda);
  recordings.emplace_back("full", ProfileMode::Full, cuda);
  if (cuda) recordings.emplace_back("summary, host timers only", ProfileMode::Summary, false);
  RunInfo info;
  info.command = "bench";
  info.model_path = s.model.path;
  info.model_sha256 = s.model.sha256;
  info.libtorch_version = libtorch_version();
  info.device = s.device.str();
  for (size_t i = 0; i < recordings.size(); ++i) {
    Recording& r = recordings[i];
    r.writer = std::make_unique<RunWriter>(fmt::format("{}/recording-{}.db", scratch, i), info);
    r.profiler = std::make_unique<CpuProfiler>(r.writer.get(), r.mode);
    r.module = std::make_unique<CompiledModule>(s.model, options, r.writer.get(), r.profiler.get());
    if (r.gpu) r.sampling = std::make_shared<GpuCallSampling>(gpu_sampling_policy(r.mode));
  }
  // Warm-up: compiles (the first from an empty cache, the others from it) and starts CUPTI once.
  // A sampling summary records a run's first calls whole: warm-up spends them, so the timed calls
  // cost what a long run's calls cost.
  for (Recording& r : recordings) {
    const int64_t whole = r.sampling && !r.sampling->policy().records_every_call() ? r.sampling->policy().first_calls : 0;
    run_block(r, inputs, static_cast<int>(std::max<int64_t>({o.warmup, 2, whole})), false);
  }
  const int blocks = (o.iters + block_calls - 1) / block_calls;
  for (int b = 0; b < blocks; ++b) {
    for (size_t k = 0; k < recordings.size(); ++k) {
      run_block(recordings[(b + k) % recordings.size()], inputs, block_calls, true);  // each mode leads in turn
    }
  }
  const char* timed_with = recordings.front().module->call_timed_with();
  for (Recording& r : recordings) {
    r.module.reset();
    r.profiler.reset();
    r.writer->close();
    r.rows = r.writer->committed_events();
    r.writer.reset();
  }
  finish_session(s);
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);

  // The median is a typical call; the mean also carries the calls a sampling summary records
  // (one in 20 by default), so it is the cost a long run pays.
  const Recording& off = recordings.front();
  auto percent = [](double ms, double off_ms) { return off_ms > 0 ? 100.0 * (ms / off_ms - 1.0) : 0.0; };
  auto median_ms = [](const Recording& r) { return analysis::median(r.call_ns) / 1e6; };
  auto mean_ms = [](const Recording& r) { return analysis::mean(r.call_ns) / 1e6; };
  auto rows_per_call = [](const Recording& r) { return static_cast<double>(r.rows) / static_cast<double>(r.calls); };
  // "5 of 100": timed calls whose GPU work CUPTI recorded (what the mean carries); "-" without a
  // collector.
  auto gpu_calls = [](const Recording& r) -> std::string {
    if (!r.gpu || !r.gpu_problem.empty() || !r.sampling) return "-";
    const auto timed = static_cast<int64_t>(r.call_ns.size());
    return r.timed_gpu_recorded == timed ? "all" : fmt::format("{} of {}", r.timed_gpu_recorded, timed);
  };
  if (o.model.json) {
    nlohmann::json modes = nlohmann::json::array();
    for (const Recording& r : recordings) {
      nlohmann::json m = {{"profile", r.label}, {"ms_per_call", median_ms(r)}, {"calls", r.call_ns.size()},
                          {"percent_over_off", percent(median_ms(r), median_ms(off))},
                          {"mean_ms_per_call", mean_ms(r)}, {"mean_percent_over_off", percent(mean_ms(r), mean_ms(off))},
                          {"gpu_recorded", r.gpu && r.gpu_problem.empty()}, {"rows_per_call", rows_per_call(r)}};
      if (r.sampling && r.gpu_problem.empty()) {
        m["gpu_calls_recorded"] = r.sampling->calls_recorded();  // warm-up and settle calls included
        m["gpu_calls_skipped"] = r.sampling->calls_skipped();
        m["gpu_timed_calls_recorded"] = r.timed_gpu_recorded;
      }
      if (!r.gpu_problem.empty()) m["gpu_not_recorded"] = r.gpu_problem;
      modes.push_back(m);
    }
    nlohmann::json j = {{"recording_cost", modes}, {"device", s.device.str()}, {"timed_with", timed_with},
                        {"backend", o.model.backend}, {"iters", o.iters}, {"block", block_calls}, {"threads", o.threads}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("recording cost of {} ({}, on {}, {} calls per mode in blocks of {} taking turns, timed with {})\n",
                           o.model.model, fmt::join(o.model.inputs, " "), s.device.str(), blocks * block_calls, block_calls,
                           timed_with);
  std::cout << fmt::format("  {:<28} {:>10}  {:>8}  {:>10}  {:>8}  {:>13}  {:>11}\n", "--profile", "median ms", "vs off",
                           "mean ms", "vs off", "rows per call", "GPU calls");
  for (const Recording& r : recordings) {
    const bool base = &r == &off;
    std::cout << fmt::format("  {:<28} {:>10.3f}  {:>8}  {:>10.3f}  {:>8}  {:>13.1f}  {:>11}\n", r.label, median_ms(r),
                             base ? "" : fmt::format("{:+.1f}%", percent(median_ms(r), median_ms(off))), mean_ms(r),
                             base ? "" : fmt::format("{:+.1f}%", percent(mean_ms(r), mean_ms(off))), rows_per_call(r),
                             gpu_calls(r));
    if (!r.gpu_problem.empty()) std::cout << fmt::format("    GPU kernels were not recorded: {}\n", r.gpu_problem);
  }
}

}  // namespace tcprof::cli
