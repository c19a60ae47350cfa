// A rich, deterministic run for GUI tests, screenshots and the benchmark: two frames, graph
// breaks of several types at several sites, three recompiles driven by a growing sequence
// length (one guard failure each), eager calls after the limit, kernels on two CPU threads and
// a GPU stream, training steps with loss, perf hints. Written through the real RunWriter.
#pragma once
#include <cstdint>
#include <string>

namespace tcprof::gui_test {

struct DemoOptions {
  char variant = 'a';          // 'b': one break fixed, one new break, faster kernels (for Compare)
  int64_t calls = 40;
  int64_t kernels_per_call = 60;
  int64_t steps = 40;
  bool record_source = true;   // record model.py in the run's sources (as tcprof does since schema 3)
};

// The model source the breaks and guards point into; line numbers match the events.
const char* demo_model_source();
void write_demo_run(const std::string& path, const DemoOptions& options = {});

}  // namespace tcprof::gui_test
