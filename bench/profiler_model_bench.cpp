// Profiler overhead on a real model: step (forward) time of the GPT-style sample run by
// LibTorch's TorchScript interpreter, with every top-level aten op timed by CpuProfiler the way
// the eager backend times graph nodes. Modes interleave round by round:
//   off      no hooks at all;
//   hooks    LibTorch RecordFunction callbacks that do nothing (the price of the hook itself,
//            which tcprof's own runtime does not pay: it times nodes directly);
//   summary  hooks + CpuProfiler summary;   full  hooks + CpuProfiler full.
// Our overhead is summary/full over hooks; the targets: summary <= 3%, full <= 10%.
//   profiler_model_bench [MODEL.pt] [--calls N] [--threads N] [--batch B] [--seq T]
// (small models and inputs make ops short, so the per-op cost shows: gpt_tiny.pt --batch 1)
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/script.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/run_writer.h"
#include "profiler/cpu_profiler.h"

namespace {

using namespace tcprof;

CpuProfiler* g_profiler = nullptr;  // the mode being measured; null: hooks do nothing
thread_local int t_depth = 0;
thread_local std::vector<int64_t> t_starts;
std::unordered_map<const char*, KernelKey> g_keys;  // op name pointers are stable per operator

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction&) {
  if (++t_depth == 1 && g_profiler) t_starts.push_back(now_ns());
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  if (t_depth-- == 1 && g_profiler) {
    int64_t end = now_ns();
    int64_t start = t_starts.back();
    t_starts.pop_back();
    auto it = g_keys.find(fn.name());
    if (it == g_keys.end()) it = g_keys.emplace(fn.name(), g_profiler->key(fn.name(), "eager")).first;
    g_profiler->record(it->second, 0, start, end - start);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = "build/samples/models/gpt.pt";
  int calls = 200, threads = 1, batch = 8, seq = 64;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc) calls = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--batch" && i + 1 < argc) batch = std::atoi(argv[++i]);
    else if (a == "--seq" && i + 1 < argc) seq = std::atoi(argv[++i]);
    else model = a;
  }
  at::set_num_threads(threads);
  torch::NoGradGuard no_grad;
  auto module = torch::jit::load(model);
  module.eval();
  std::vector<c10::IValue> inputs{torch::randint(0, 512, {batch, seq}, torch::kLong)};
  for (int i = 0; i < 5; ++i) module.forward(inputs);  // warm up (profiling executor)

  auto dir = std::filesystem::temp_directory_path() / "tcprof_model_bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  RunInfo info;
  info.command = "bench";
  RunWriter summary_writer((dir / "summary.db").string(), info);
  RunWriter full_writer((dir / "full.db").string(), info);
  CpuProfiler summary(&summary_writer, ProfileMode::Summary);
  CpuProfiler full(&full_writer, ProfileMode::Full);

  const char* names[] = {"off", "hooks", "summary", "full"};
  std::vector<std::vector<int64_t>> times(4);
  for (int round = 0; round < calls; ++round) {
    for (int i = 0; i < 4; ++i) {
      int m = (round + i) % 4;
      CpuProfiler* p = m == 2 ? &summary : m == 3 ? &full : nullptr;
      at::CallbackHandle handle = 0;
      if (m > 0) handle = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end)
                                                    .scopes({at::RecordScope::FUNCTION}));
      g_profiler = p;
      g_keys.clear();
      int64_t start = now_ns();
      if (p) p->begin_call(round + 1);
      module.forward(inputs);
      if (p) p->end_call();
      times[static_cast<size_t>(m)].push_back(now_ns() - start);
      g_profiler = nullptr;
      if (handle) at::removeCallback(handle);
    }
  }
  auto median = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return static_cast<double>(v[v.size() / 2]);
  };
  summary_writer.close();
  full_writer.close();
  // Full mode wrote one row per timed op: the writer's committed count gives ops per call.
  size_t ops_per_call = static_cast<size_t>(full_writer.committed_events()) / static_cast<size_t>(calls);
  std::printf("%s, input i64[%d,%d], %d intra-op thread(s), %d calls per mode, interleaved; "
              "%zu timed ops per call\n",
              model.c_str(), batch, seq, threads, calls, ops_per_call);
  double off = median(times[0]), hooks = median(times[1]);
  for (int m = 0; m < 4; ++m) {
    double med = median(times[static_cast<size_t>(m)]);
    std::printf("  %-8s median %9.1f us  %+6.2f%% vs off  %+6.2f%% vs hooks\n", names[m], med / 1e3,
                100.0 * (med - off) / off, 100.0 * (med - hooks) / hooks);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
