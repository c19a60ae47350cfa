// Profiler overhead: what --profile off|summary|full costs the code being timed.
//   1. per launch: ns added by one CpuProfiler::Scope around an empty kernel, per mode;
//   2. per call: a GPT-style call (96 kernels of 2-60 us of real arithmetic, 12 distinct names,
//      3 graphs) timed per mode, modes interleaved round by round so drift hits all alike;
//      median call time and overhead over `off` (issue targets: summary <= 3%, full <= 10%);
//   3. (with CUDA) CUPTI record processing: records/s through the real walker and processor.
//   profiler_overhead_bench [--calls N] [--dir DIR]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/run_writer.h"
#include "profiler/cpu_profiler.h"
#ifdef TCPROF_HAVE_CUPTI
#include "profiler/cupti_loader.h"
#include "profiler/cupti_record_types.h"
#include "profiler/cupti_records.h"
#endif

namespace {

using namespace tcprof;

volatile double g_sink = 0;

// Real arithmetic for about `ns` nanoseconds (calibrated once).
double g_iters_per_ns = 0;
void work(int64_t ns) {
  auto iters = static_cast<int64_t>(static_cast<double>(ns) * g_iters_per_ns);
  double x = 1.0001;
  for (int64_t i = 0; i < iters; ++i) x = x * 1.0000001 + 1e-9;
  g_sink = g_sink + x;
}

void calibrate() {
  g_iters_per_ns = 1.0;
  int64_t t0 = now_ns();
  work(20'000'000);
  int64_t t1 = now_ns();
  g_iters_per_ns = 20'000'000.0 / static_cast<double>(t1 - t0);
}

RunInfo bench_info(ProfileMode mode) {
  RunInfo info;
  info.command = "bench";
  info.config_json = std::string(R"({"profile":")") + std::string(profile_mode_name(mode)) + "\"}";
  return info;
}

double per_launch_ns(const std::string& dir, ProfileMode mode, int64_t launches) {
  RunWriter w(dir + "/launch_" + std::string(profile_mode_name(mode)) + ".db", bench_info(mode));
  CpuProfiler p(&w, mode);
  std::vector<KernelKey> keys;
  for (int i = 0; i < 50; ++i) keys.push_back(p.key("kernel_" + std::to_string(i), "generated"));
  Id graph = w.next_id();
  int64_t t0 = now_ns();
  for (int64_t i = 0; i < launches; ++i) {
    if (i % 200 == 0) p.begin_call(w.next_id());
    auto scope = p.time(keys[static_cast<size_t>(i % 50)], graph);
    if (i % 200 == 199) p.end_call();
  }
  p.end_call();
  int64_t t1 = now_ns();
  return static_cast<double>(t1 - t0) / static_cast<double>(launches);
}

// The bookkeeping alone, without the two clock reads a Scope makes.
double per_record_ns(const std::string& dir, ProfileMode mode, int64_t launches) {
  RunWriter w(dir + "/record_" + std::string(profile_mode_name(mode)) + ".db", bench_info(mode));
  CpuProfiler p(&w, mode);
  std::vector<KernelKey> keys;
  for (int i = 0; i < 50; ++i) keys.push_back(p.key("kernel_" + std::to_string(i), "generated"));
  Id graph = w.next_id();
  int64_t t0 = now_ns();
  for (int64_t i = 0; i < launches; ++i) {
    if (i % 200 == 0) p.begin_call(w.next_id());
    p.record(keys[static_cast<size_t>(i % 50)], graph, i * 1000, 500 + (i & 63));
    if (i % 200 == 199) p.end_call();
  }
  p.end_call();
  int64_t t1 = now_ns();
  return static_cast<double>(t1 - t0) / static_cast<double>(launches);
}

struct CallShape {
  std::vector<int64_t> durations;  // ns per kernel in launch order
  std::vector<size_t> names;       // index into 12 names
  std::vector<int> graphs;         // 0..2
};

CallShape gpt_call() {
  // 3 graphs (split by graph breaks) x 4 blocks x 8 kernels: layer norm, qkv mm, softmax,
  // attn mm, proj mm, gelu, mlp mm, add; small elementwise kernels and larger matmuls.
  const int64_t per_kind[8] = {4'000, 40'000, 6'000, 20'000, 30'000, 3'000, 60'000, 2'000};
  CallShape s;
  for (int g = 0; g < 3; ++g) {
    for (int b = 0; b < 4; ++b) {
      for (size_t k = 0; k < 8; ++k) {
        s.durations.push_back(per_kind[k]);
        s.names.push_back(k + (g == 2 ? 4 : 0));  // the last graph has partly other kernels
        s.graphs.push_back(g);
      }
    }
  }
  return s;
}

void per_call(const std::string& dir, int calls) {
  const ProfileMode modes[] = {ProfileMode::Off, ProfileMode::Summary, ProfileMode::Full};
  CallShape shape = gpt_call();
  std::vector<std::unique_ptr<RunWriter>> writers;
  std::vector<std::unique_ptr<CpuProfiler>> profilers;
  std::vector<std::vector<KernelKey>> keys(3);
  std::vector<Id> graph_ids;
  for (int m = 0; m < 3; ++m) {
    writers.push_back(std::make_unique<RunWriter>(
        dir + "/call_" + std::string(profile_mode_name(modes[m])) + ".db", bench_info(modes[m])));
    profilers.push_back(std::make_unique<CpuProfiler>(writers[m].get(), modes[m]));
    for (int n = 0; n < 12; ++n) keys[m].push_back(profilers[m]->key("k" + std::to_string(n), "generated"));
  }
  for (int g = 0; g < 3; ++g) graph_ids.push_back(writers[0]->next_id());
  std::vector<std::vector<int64_t>> times(3);
  for (int round = 0; round < calls; ++round) {
    for (int i = 0; i < 3; ++i) {
      int m = (round + i) % 3;  // rotate the order so no mode always runs first
      CpuProfiler& p = *profilers[m];
      int64_t start = now_ns();
      p.begin_call(writers[m]->next_id());
      for (size_t k = 0; k < shape.durations.size(); ++k) {
        auto scope = p.time(keys[m][shape.names[k]], graph_ids[static_cast<size_t>(shape.graphs[k])]);
        work(shape.durations[k]);
      }
      p.end_call();
      times[m].push_back(now_ns() - start);
    }
  }
  auto median = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return static_cast<double>(v[v.size() / 2]);
  };
  double off = median(times[0]);
  std::printf("per call (GPT-style, %zu kernels, %d calls per mode, interleaved):\n",
              shape.durations.size(), calls);
  for (int m = 0; m < 3; ++m) {
    double med = median(times[m]);
    std::printf("  %-8s median %8.1f us   %+6.2f%% vs off\n",
                std::string(profile_mode_name(modes[m])).c_str(), med / 1e3, 100.0 * (med - off) / off);
  }
  profilers.clear();
  for (auto& w : writers) w->close();
}

#ifdef TCPROF_HAVE_CUPTI
void cupti_processing(const std::string& dir) {
  auto loaded = load_cupti();
  if (!loaded.available()) {
    std::printf("CUPTI processing: skipped (%s)\n", loaded.error.c_str());
    return;
  }
  RunWriter w(dir + "/cupti.db", bench_info(ProfileMode::Full));
  LaunchScopeTable scopes;
  CuptiRecordProcessor p(w, *loaded.api, scopes, 0);
  // One 2 MiB-ish buffer: external correlation + runtime launch + kernel per launch.
  std::vector<uint64_t> words;
  size_t bytes = 0;
  auto add = [&](const auto& r) {
    size_t at = bytes;
    bytes += sizeof r;
    words.resize((bytes + 7) / 8);
    std::memcpy(reinterpret_cast<uint8_t*>(words.data()) + at, &r, sizeof r);
  };
  const int launches = 6000;
  Id call = w.next_id(), graph = w.next_id();
  for (int i = 1; i <= launches; ++i) {
    cupti::ExternalCorrelationRecord e{};
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    e.externalId = scopes.open({call, graph});
    e.correlationId = static_cast<uint32_t>(i);
    add(e);
    cupti::ApiRecord a{};
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    a.correlationId = static_cast<uint32_t>(i);
    a.start = 1000 + static_cast<uint64_t>(i) * 100;
    a.end = a.start + 5;
    add(a);
    cupti::KernelRecord k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = "fused_kernel";
    k.correlationId = static_cast<uint32_t>(i);
    k.start = a.start + 50;
    k.end = k.start + 40;
    add(k);
  }
  const int rounds = 50;
  int64_t t0 = now_ns();
  for (int r = 0; r < rounds; ++r) {
    p.buffer_completed(nullptr, 0, reinterpret_cast<uint8_t*>(words.data()), bytes);
    p.end_window();
  }
  int64_t t1 = now_ns();
  double records = 3.0 * launches * rounds;
  std::printf("CUPTI processing: %.2f M records/s (%.0f ns per record, %zu-byte buffer)\n",
              records / (static_cast<double>(t1 - t0) / 1e9) / 1e6,
              static_cast<double>(t1 - t0) / records, bytes);
  p.finish();
}
#endif

}  // namespace

int main(int argc, char** argv) {
  int calls = 300;
  std::string dir = (std::filesystem::temp_directory_path() / "tcprof_profiler_bench").string();
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--calls") calls = std::atoi(argv[i + 1]);
    if (a == "--dir") dir = argv[i + 1];
  }
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  calibrate();
  const int64_t launches = 2'000'000;
  std::printf("per launch (empty kernel, %lld launches, 50 names, 200 per call):\n",
              static_cast<long long>(launches));
  double base = 0;
  for (ProfileMode m : {ProfileMode::Off, ProfileMode::Summary, ProfileMode::Full}) {
    per_launch_ns(dir, m, launches / 4);  // warm up
    double ns = per_launch_ns(dir, m, launches);
    if (m == ProfileMode::Off) base = ns;
    std::printf("  %-8s %6.1f ns per launch (%+.1f ns over off)\n",
                std::string(profile_mode_name(m)).c_str(), ns, ns - base);
  }
  std::printf("per record() call (no clock reads):\n");
  for (ProfileMode m : {ProfileMode::Off, ProfileMode::Summary, ProfileMode::Full}) {
    std::printf("  %-8s %6.1f ns\n", std::string(profile_mode_name(m)).c_str(),
                per_record_ns(dir, m, launches));
  }
  int64_t c0 = now_ns();
  int64_t sink = 0;
  for (int i = 0; i < 1'000'000; ++i) sink += now_ns();
  std::printf("clock: %.1f ns per tcprof::now_ns() (%lld)\n",
              static_cast<double>(now_ns() - c0) / 1e6, static_cast<long long>(sink & 1));
  per_call(dir, calls);
#ifdef TCPROF_HAVE_CUPTI
  cupti_processing(dir);
#endif
  std::filesystem::remove_all(dir);
  return 0;
}
