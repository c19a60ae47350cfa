// Store throughput: kernel events per second through RunWriter from 1 and 4 threads, and the
// caller's cost per record() call. Targets (issue 2): >= 1,000,000 events/s sustained, < 200 ns
// per event for the caller.
//   store_bench [--events N] [--dir DIR]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/run_writer.h"

namespace {

int64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

struct Result {
  double caller_ns_per_event;     // slowest thread's wall time inside record(), per event
  double caller_cpu_ns_per_event; // the same in CPU time: with more threads than cores, wall
                                  // time also counts time spent descheduled

  double sustained_events_per_s;  // events / (first record() .. everything committed)
};

// Each of `threads` threads records events/threads kernel events as fast as it can; close()
// waits until all are committed.
Result run(const std::string& path, int threads, int64_t events) {
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  tcprof::RunInfo info;
  info.command = "store_bench";
  tcprof::RunWriter writer(path, info);
  uint32_t name = writer.intern("fused_kernel");
  uint32_t kind = writer.intern("generated");
  uint32_t cpu = writer.intern("cpu");
  std::vector<int64_t> caller_ns(static_cast<size_t>(threads)), caller_cpu(caller_ns);
  int64_t start = tcprof::now_ns();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      tcprof::KernelEvent e;
      e.name_id = name;
      e.kind_id = kind;
      e.device_id = cpu;
      e.stream = t;
      int64_t n = events / threads;
      int64_t t0 = tcprof::now_ns();
      int64_t c0 = thread_cpu_ns();
      for (int64_t i = 0; i < n; ++i) {
        e.call_id = i / 100;
        e.start_ns = i * 1000;
        e.duration_ns = 900;
        writer.record(e);
      }
      caller_ns[static_cast<size_t>(t)] = tcprof::now_ns() - t0;
      caller_cpu[static_cast<size_t>(t)] = thread_cpu_ns() - c0;
    });
  }
  for (auto& th : pool) th.join();
  writer.close();
  int64_t total = tcprof::now_ns() - start;
  double worst_caller = static_cast<double>(*std::max_element(caller_ns.begin(), caller_ns.end()));
  double worst_cpu = static_cast<double>(*std::max_element(caller_cpu.begin(), caller_cpu.end()));
  double per_thread = static_cast<double>(events) / threads;
  return {worst_caller / per_thread, worst_cpu / per_thread,
          static_cast<double>(events) / (static_cast<double>(total) / 1e9)};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t events = 2'000'000;
  std::string dir = std::filesystem::temp_directory_path().string();
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--events") events = std::strtoll(argv[i + 1], nullptr, 10);
    if (a == "--dir") dir = argv[i + 1];
  }
  std::string path = dir + "/tcprof_store_bench.db";
  std::printf("store_bench: %lld kernel events into %s\n", static_cast<long long>(events), path.c_str());
  std::printf("%-8s %-10s %16s %16s %20s\n", "threads", "events", "caller ns/event",
              "caller cpu ns", "sustained events/s");
  // A burst that fits the queues shows the caller's own cost; the long run shows what the
  // writer sustains (callers then wait for it once its queues are full).
  for (int threads : {1, 4}) {
    for (int64_t n : {int64_t{200'000}, events}) {
      Result r = run(path, threads, n);
      std::printf("%-8d %-10lld %16.1f %16.1f %20.0f\n", threads, static_cast<long long>(n),
                  r.caller_ns_per_event, r.caller_cpu_ns_per_event, r.sustained_events_per_s);
    }
  }
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  return 0;
}
