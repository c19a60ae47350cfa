// The randomized differential tester of the cpp backend: generates random graphs of lowered ops
// (graph_generator.h), runs each through tcprof's cpp backend and eager LibTorch and compares them
// (differential_check.h), and counts what happened. fuzz_graphs is its command line; the
// fuzz_tests ctest runs a short campaign plus targeted cases.
#pragma once
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "bench/fuzz/differential_check.h"
#include "bench/fuzz/fuzz_case.h"
#include "bench/fuzz/graph_generator.h"

namespace tcprof::fuzz {

struct FuzzOptions {
  uint64_t seed = 1;
  bool minimize = false;             // shrink each failing case (minimize_case) and report that too
  // Each case runs in a child process (fork), so that a backend crash is an error of that case,
  // not the end of the run. Only for a process that has not computed with LibTorch yet: OpenMP's
  // thread pool does not survive a fork (fuzz_graphs; not the tests).
  bool isolate = false;
  int cases = 100;
  int first = 0;                     // run cases first .. first + cases - 1 of `seed` (shards, resumes)
  std::vector<uint64_t> case_seeds;  // instead of `cases` from `seed`: exactly these cases
  bool verbose = false;              // a line per case, and the op coverage at the end
  bool gradients = false;            // check gradients through the compiled backward (--backward)
  std::string backend = "cpp";       // --backend cuda: the CUDA kernels, in emulation without a GPU
  std::string device = "cpu";        // --device cuda: the module, inputs and kernels on the GPU (cuda backend)
  std::string keep_failures_dir;     // failing cases' report, source and module archive go here
  GeneratorOptions generator;
  Tolerance tol;
  std::ostream* log = nullptr;  // progress and failure reports (null: silent)
};

struct FuzzSummary {
  int cases = 0, ops = 0, calls = 0;
  int mismatches = 0, errors = 0, invalid = 0;
  int kernels = 0, fused_ops = 0, fallback_calls = 0;
  int no_kernel = 0;               // cases where the backend generated no kernel at all
  int oracle_used = 0;             // outputs accepted by the f64 oracle (differential_check.h)
  int rounding_draws_used = 0;     // ... of which only with rounding draws (output_check.h)
  int unexpected_recompiles = 0;
  bool gradients = false;  // a --backward run: gradients were compared
  int backward_cases = 0;  // ... and these cases ran at least one compiled backward graph
  int unstable_eager = 0;  // ... and eager's gradients changed between identical runs this often
  int attention_kernels = 0;  // attention kernels the backend made (generated attention ops fused)
  int linear_gemms = 0;       // linears run as GEMMs against a prepared weight
  int onednn_gemms = 0;       // products of two graph values kept on oneDNN's matmul
  int linear_epilogues = 0;   // cuda: linears with their activation as cuBLASLt's epilogue
  int conv_epilogues = 0;     // cuda (TCPROF_CUDA_CONV_EPILOGUES=1): convolutions with their ReLU in cuDNN's call
  double seconds = 0;
  std::map<std::string, int> op_counts;     // generator ops
  std::map<std::string, int> fallback_ops;  // ops the backend left to LibTorch, by name
  std::vector<std::string> failures;        // reports of mismatches and errors
  bool failed() const { return mismatches > 0 || errors > 0; }
};

// The generator seed of case `index` of a run (fuzz_graphs --case prints and takes these).
uint64_t case_seed(uint64_t run_seed, int index);

FuzzSummary run_fuzz(const FuzzOptions& options);

// Shrinks a failing case while it keeps failing the same way (mismatch stays mismatch, error
// stays error): a single returned value, the shortest prefix of statements whose last value
// still fails, then statements removed one at a time, dynamic sizes
// dropped, inputs made contiguous and plain, unused parameters removed. Every try is a full
// check_case. Returns the case unchanged if it passes or is invalid.
FuzzCase minimize_case(const FuzzCase& c, const CheckOptions& options);

// Adds one case's outcome to the counts.
void add_outcome(FuzzSummary& summary, const FuzzCase& c, const CaseOutcome& outcome);

// "2000 cases, 15321 ops, 6000 calls: 0 mismatches, 0 errors, ..."
std::string summary_line(const FuzzSummary& s);
std::string coverage_text(const FuzzSummary& s);  // op counts and fallback ops

// The generated-kernel cache of this process: TCPROF_CACHE_DIR, set to a new temporary directory
// unless the environment already names one. The directory is removed with the object. Create it
// before the first compile (the compiler reads the variable once).
class PrivateKernelCache {
 public:
  PrivateKernelCache();
  ~PrivateKernelCache();
  PrivateKernelCache(const PrivateKernelCache&) = delete;
  PrivateKernelCache& operator=(const PrivateKernelCache&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  bool owned_ = false;
};

}  // namespace tcprof::fuzz
