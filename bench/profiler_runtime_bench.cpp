// The overhead benchmark: call (step) time of a model run by tcprof's own runtime with
// --profile off, summary and full, in one process. One CompiledModule per mode, each recording
// into its own run database as `tcprof run` does; modes interleave call by call so machine noise
// hits all three alike. Targets: summary <= 3% over off, full <= 10%.
//   profiler_runtime_bench [MODEL.pt] [--input SPEC] [--calls N] [--threads N]
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/compiled_module.h"
#include "compiler/runtime/input_generator.h"
#include "core/clock.h"
#include "core/run_writer.h"
#include "profiler/cpu_profiler.h"

int main(int argc, char** argv) {
  using namespace tcprof;
  std::string model_path = "build/samples/models/gpt.pt";
  std::string input = "i64[8,64](0,512)";
  int calls = 200, threads = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--input" && i + 1 < argc) input = argv[++i];
    else if (a == "--calls" && i + 1 < argc) calls = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else model_path = a;
  }
  at::set_num_threads(threads);
  auto model = load_model(model_path);
  auto inputs = InputGenerator({parse_input_spec(input)}, {}, 0).make(0);

  auto dir = std::filesystem::temp_directory_path() / "tcprof_runtime_bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const ProfileMode modes[] = {ProfileMode::Off, ProfileMode::Summary, ProfileMode::Full};
  struct Setup {
    std::unique_ptr<RunWriter> writer;
    std::unique_ptr<CpuProfiler> profiler;
    std::unique_ptr<CompiledModule> module;
    std::vector<int64_t> times;
  };
  std::vector<Setup> setups(3);
  for (int m = 0; m < 3; ++m) {
    RunInfo info;
    info.command = "bench";
    std::string name(profile_mode_name(modes[m]));
    setups[m].writer = std::make_unique<RunWriter>((dir / (name + ".db")).string(), info);
    setups[m].profiler = std::make_unique<CpuProfiler>(setups[m].writer.get(), modes[m]);
    setups[m].module = std::make_unique<CompiledModule>(model, CompileOptions{}, setups[m].writer.get(),
                                                        setups[m].profiler.get());
    for (int i = 0; i < 10; ++i) setups[m].module->call(inputs);  // compile and warm up
  }
  for (int round = 0; round < calls; ++round) {
    for (int i = 0; i < 3; ++i) {
      Setup& s = setups[static_cast<size_t>((round + i) % 3)];
      int64_t start = now_ns();
      s.module->call(inputs);
      s.times.push_back(now_ns() - start);
    }
  }
  auto median = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return static_cast<double>(v[v.size() / 2]);
  };
  uint64_t full_rows = 0;
  for (auto& s : setups) {
    s.module.reset();
    s.profiler.reset();
    s.writer->close();
  }
  full_rows = setups[2].writer->committed_events();
  std::printf("%s, input %s, %d intra-op thread(s), %d calls per mode, interleaved; "
              "~%llu rows per call in full mode\n",
              model_path.c_str(), input.c_str(), threads, calls,
              static_cast<unsigned long long>(full_rows / static_cast<uint64_t>(calls + 10)));
  double off = median(setups[0].times);
  for (int m = 0; m < 3; ++m) {
    double med = median(setups[static_cast<size_t>(m)].times);
    std::printf("  %-8s median %9.1f us  %+6.2f%% vs off\n",
                std::string(profile_mode_name(modes[m])).c_str(), med / 1e3, 100.0 * (med - off) / off);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
