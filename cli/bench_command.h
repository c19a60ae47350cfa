// `tcprof bench`: inference (bench_command.cpp) and, with --train, one training step (forward, loss,
// backward, optimizer step) compiled by tcprof against the same step in eager LibTorch with
// torch::optim (bench_train.cpp), in one process, round-robin; medians and ratios to eager.
#pragma once
#include <string>

#include "cli/model_command.h"
#include "cli/training_step.h"

namespace tcprof::cli {

struct TrainBenchOptions {
  ModelOptions model;
  int threads = 1;
  int iters = 30;
  int warmup = 5;
  std::string target;  // required with --train
  std::string loss = "cross_entropy";
  OptimizerChoice optimizer{"adam", 1e-3};
};

void run_train_bench(const TrainBenchOptions& o);
// bench --recording-cost: the compiled module's calls under --profile off, summary and full (and, on a
// GPU, summary without CUPTI), blocks of `block_calls` calls per mode taking turns, in one process.
void run_recording_cost_bench(const TrainBenchOptions& o, int block_calls);

// The 1-minute load average (/proc/loadavg), or -1 where there is none. On a 2-core VM a second
// busy process turns OpenMP barriers into waits for a descheduled core: timings at 2 threads then
// swing by 20x, so a bench that was not alone says so.
// A private, empty kernel cache for cold-start measurements.
std::string temp_cache_dir();
double load_average();
// Quiet: nothing else was running before, and during the run the load stayed near what the
// bench itself adds (its threads).
bool quiet_machine(double before, double after, int threads);
// "  load average 0.12 before, 1.05 after", and a warning when the machine was not quiet.
std::string load_line(double before, double after, int threads);

}  // namespace tcprof::cli
