// A synthetic run shaped like a real one: a GPT-style model with a data-dependent branch that
// breaks the graph, a varying sequence length that forces one recompile, kernels and training
// steps. Deterministic for a given options struct (golden tests depend on it).
#pragma once
#include <cstdint>
#include <string>

namespace tcprof {

struct SyntheticRunOptions {
  int64_t calls = 20;
  int64_t kernels = 2000;       // total kernel rows
  int64_t steps = 20;
  int64_t base_ns = 1'000'000'000;  // fixed timestamps keep the output reproducible
  std::string started_at = "2026-11-22T00:00:00Z";
};

void write_synthetic_run(const std::string& path, const SyntheticRunOptions& options);

// A CUDA run of one call with one GPU kernel whose collector's counters say a sampling summary
// recorded GPU work on `calls_recorded` calls and skipped `calls_skipped` (gpu_call_sampling.h).
void write_sampled_gpu_run(const std::string& path, int64_t calls_recorded, int64_t calls_skipped);

}  // namespace tcprof
