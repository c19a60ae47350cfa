// fuzz_graphs: the randomized differential tester of the cpp and cuda backends (graph_fuzzer.h).
//   fuzz_graphs [--n N] [--seed S] [--verbose] [--keep-failures DIR]   N random cases from seed S
//   fuzz_graphs --first K --n N --seed S                                 cases K .. K+N-1 of that run: shards
//                                                                        of a long run over processes
//   fuzz_graphs --case SEED [same options]                              one case again, by its seed
// --avoid-known-bugs leaves out the patterns of the open bugs (GeneratorOptions::known_bug_patterns);
// --minimize shrinks each failing case (minimize_case) and prints the result. Each case runs in a
// child process, so that a crash of the backend is a failing case (an error) and the run goes on;
// --in-process runs them all in this process (for a debugger). --conv adds convolutions over mostly
// 4-D inputs (the layout pass's oneDNN chains with their post-ops and residual adds); --attention
// adds self-attention with and without constant masks (the attention kernel) and linear layers
// (GEMMs against prepared weights); --pool adds max pools and channel concatenations of 4-D values
// (with --conv, the layout pass's channel ops on convolution chains). --device cuda (with --backend
// cuda) runs each case's module, inputs and generated kernels on the GPU against eager LibTorch there;
// its cases run in this process (CUDA does not survive fork): shard a long run with --first.
// --backward compares gradients through the backend's compiled training graphs (cpp or cuda, on
// the CPU or with --device cuda on the GPU) with LibTorch's autograd (gradient_check.cpp).
// Prints a summary line; exits 1 when a compiled result differs from eager (a mismatch) or the
// compiled module fails where eager does not (an error), 2 on a usage error.
#include <cstdlib>
#include <iostream>
#include <string>

#include <ATen/Context.h>
#include <torch/cuda.h>

#include "bench/fuzz/graph_fuzzer.h"

namespace {

constexpr const char* kUsage =
    "usage: fuzz_graphs [--n N] [--seed S] [--first K] [--verbose] [--keep-failures DIR] [--avoid-known-bugs]\n"
    "                   [--minimize] [--in-process] [--backward] [--conv] [--pool] [--attention]\n"
    "                   [--backend cpp|cuda] [--device cpu|cuda]\n"
    "       fuzz_graphs --case SEED [same options]\n";

bool parse_uint(const std::string& text, uint64_t* out) {
  try {
    size_t used = 0;
    *out = std::stoull(text, &used, 0);
    return used == text.size();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  tcprof::fuzz::FuzzOptions options;
  options.log = &std::cout;
  options.isolate = true;  // a backend crash is one failing case, not the end of the run
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](uint64_t* out) {
      if (i + 1 >= argc || !parse_uint(argv[i + 1], out)) {
        std::cerr << "fuzz_graphs: " << arg << " needs a non-negative integer\n" << kUsage;
        std::exit(2);
      }
      ++i;
    };
    uint64_t n = 0;
    if (arg == "--n") {
      value(&n);
      options.cases = static_cast<int>(n);
    } else if (arg == "--first") {
      value(&n);
      options.first = static_cast<int>(n);
    } else if (arg == "--seed") {
      value(&options.seed);
    } else if (arg == "--case") {
      value(&n);
      options.case_seeds.push_back(n);
    } else if (arg == "--avoid-known-bugs") {
      options.generator.known_bug_patterns = false;
    } else if (arg == "--in-process") {
      options.isolate = false;
    } else if (arg == "--conv") {
      options.generator.convolutions = true;  // convolution chains (the layout pass)
    } else if (arg == "--pool") {
      options.generator.pools = true;  // max pools and channel cats (the layout pass's channel ops)
    } else if (arg == "--attention") {
      options.generator.attention = true;  // self-attention (the attention kernel)
    } else if (arg == "--backward") {
      options.gradients = true;  // gradients through the compiled training graphs
    } else if (arg == "--minimize") {
      options.minimize = true;
    } else if (arg == "--verbose") {
      options.verbose = true;
    } else if (arg == "--backend" && i + 1 < argc && (std::string(argv[i + 1]) == "cpp" || std::string(argv[i + 1]) == "cuda")) {
      options.backend = argv[++i];
    } else if (arg == "--device" && i + 1 < argc && (std::string(argv[i + 1]) == "cpu" || std::string(argv[i + 1]) == "cuda")) {
      options.device = argv[++i];
    } else if (arg == "--keep-failures" && i + 1 < argc) {
      options.keep_failures_dir = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "fuzz_graphs: unknown argument '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  if (options.device == "cuda") {
    if (options.backend != "cuda") {
      std::cerr << "fuzz_graphs: --device cuda tests the cuda backend's kernels on the GPU: add --backend cuda\n";
      return 2;
    }
    if (!torch::cuda::is_available()) {
      std::cerr << "fuzz_graphs: --device cuda: no CUDA device is visible (or this LibTorch has no CUDA); "
                   "without a GPU, --backend cuda alone runs the kernels in emulation\n";
      return 2;
    }
    options.isolate = false;  // CUDA is initialised now, and a forked child could not use it
    // Eager's convolutions would otherwise round through TF32 on Ampere and later: the differential
    // test compares the compiler's arithmetic, in f32 on both sides.
    at::globalContext().setAllowTF32CuDNN(false);
    at::globalContext().setAllowTF32CuBLAS(false);
  }
  tcprof::fuzz::PrivateKernelCache cache;  // before the first compile
  tcprof::fuzz::FuzzSummary summary = tcprof::fuzz::run_fuzz(options);
  if (options.verbose) std::cout << tcprof::fuzz::coverage_text(summary);
  std::cout << "fuzz_graphs: " << tcprof::fuzz::summary_line(summary) << "\n";
  return summary.failed() ? 1 : 0;
}
