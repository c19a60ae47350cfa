// Runtime overhead (issue 3 targets): the guard check on the hit path for a call with 4 tensor
// inputs (< 1 us), and the runtime's added cost per call over running the captured graph
// directly (< 5 us), with and without recording into a run database.
//   runtime_overhead_bench SAMPLES_DIR [--iters N]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "compiler/runtime/compiled_module.h"
#include "compiler/runtime/input_generator.h"
#include "core/clock.h"
#include "core/run_writer.h"

namespace {

template <typename F>
double median_ns(int iters, F&& f) {
  std::vector<int64_t> samples;
  constexpr int kBatch = 100;
  for (int i = 0; i < iters / kBatch; ++i) {
    int64_t t0 = tcprof::now_ns();
    for (int j = 0; j < kBatch; ++j) f();
    samples.push_back(tcprof::now_ns() - t0);
  }
  std::sort(samples.begin(), samples.end());
  return static_cast<double>(samples[samples.size() / 2]) / kBatch;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SAMPLES_DIR [--iters N]\n", argv[0]);
    return 2;
  }
  std::string model_path = std::string(argv[1]) + "/four_inputs.pt";
  int iters = 20000;
  if (argc >= 4 && std::string(argv[2]) == "--iters") iters = std::atoi(argv[3]);
  at::set_num_threads(1);
  auto model = tcprof::load_model(model_path);
  std::vector<tcprof::InputSpec> specs(4, tcprof::parse_input_spec("f32[8,16]"));
  auto inputs = tcprof::InputGenerator(specs, {}, 0).make(0);

  tcprof::CompiledModule bare(model, tcprof::CompileOptions{}, nullptr);
  bare.call(inputs);
  auto& entry = *bare.frames()[0]->entries[0];
  volatile bool sink = false;
  double guard_ns = median_ns(iters, [&] { sink = entry.guards.check(inputs); });
  double graph_ns = median_ns(iters, [&] { entry.compiled->run(inputs); });
  double call_ns = median_ns(iters, [&] { bare.call(inputs); });

  std::string db = (std::filesystem::temp_directory_path() / "tcprof_overhead_bench.db").string();
  std::filesystem::remove(db);
  double recorded_ns;
  {
    tcprof::RunInfo info;
    info.command = "bench";
    tcprof::RunWriter writer(db, info);
    tcprof::CompiledModule recorded(model, tcprof::CompileOptions{}, &writer);
    recorded.call(inputs);
    recorded_ns = median_ns(iters, [&] { recorded.call(inputs); });
  }
  std::filesystem::remove(db);
  std::printf("runtime_overhead_bench: 4 tensor inputs f32[8,16], %zu guards, 1 thread\n",
              entry.guards.guards().size());
  std::printf("  guard check (hit)           %8.1f ns\n", guard_ns);
  std::printf("  captured graph alone        %8.1f ns\n", graph_ns);
  std::printf("  CompiledModule::call        %8.1f ns  (overhead %.1f ns)\n", call_ns, call_ns - graph_ns);
  std::printf("  call, recorded to a run db  %8.1f ns  (overhead %.1f ns)\n", recorded_ns, recorded_ns - graph_ns);
  return sink ? 0 : 0;
}
