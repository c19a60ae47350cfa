// The differential check: runs a FuzzCase through the cpp backend (tcprof::CompiledModule,
// strict, fullgraph) and through eager LibTorch on identical copies of the inputs, and compares
// every output and every input afterwards.
//
// The verdict on each output (tolerances, the f64 oracle) is compiler/runtime/output_check.h's, the
// one `tcprof run --verify` gives.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "bench/fuzz/fuzz_case.h"
#include "compiler/runtime/output_check.h"

namespace tcprof::fuzz {

struct CheckOptions {
  Tolerance tol;
  std::string work_dir;  // where the module archive is written (must exist)
  bool keep_failed_archive = false;  // a failing case leaves its module archive in work_dir
  // Tests only: add a small error to the compiled result of the second call, which must then be
  // reported as a mismatch.
  bool perturb_compiled_output = false;
  // Check gradients instead of outputs (check_case_gradients).
  bool gradients = false;
  // The backend under test: cpp, or cuda (its kernels in emulation on the CPU, on the device on a GPU).
  std::string backend = "cpp";
  // Where the module, its inputs and the compiled kernels live: "cuda" compares the device's results
  // (eager LibTorch on the GPU against the backend's kernels there; the f64 oracle stays on the CPU).
  std::string device = "cpu";
};

struct CaseOutcome {
  enum class Status {
    Pass,
    Mismatch,  // the compiled module computed something else than eager (or changed an input)
    Error,     // the compiled module failed where eager did not (compile, capture, run)
    Invalid,   // eager rejects the case: a generator problem, not a backend one
  };
  Status status = Status::Pass;
  std::string report;       // on failure: the problem, the case, the compiled program
  std::string archive;      // the saved module, when kept
  int calls = 0;            // calls compared
  int kernels = 0, window_kernels = 0, fused_ops = 0, extern_calls = 0, fallback_calls = 0;
  int oracle_used = 0;      // outputs accepted by the f64 oracle after failing elementwise
  int rounding_draws_used = 0;  // ... of which only with rounding draws (output_check.h)
  int unexpected_recompiles = 0;  // a recompile the guards should not have needed
  int compiled_backwards = 0;     // gradient mode: graphs whose backward ran compiled
  int unstable_eager = 0;         // gradient mode: eager reruns that differed from eager's first run
  int attention_kernels = 0;      // graphs' attention kernels (plan_attention.h)
  int linear_gemms = 0;           // linears run as GEMMs against a prepared weight (kept by the autotune)
  int onednn_gemms = 0;           // products of two graph values kept on oneDNN's matmul (schedule/plan_gemm.h)
  int linear_epilogues = 0;       // cuda: linears with their ReLU or tanh-GELU as cuBLASLt's epilogue
  int conv_epilogues = 0;         // cuda (TCPROF_CUDA_CONV_EPILOGUES=1): convolutions with their ReLU in cuDNN's call
  std::map<std::string, int> fallback_ops;  // ops the backend left to LibTorch (not by design)
};
const char* status_name(CaseOutcome::Status status);

// The case's inputs on the device under test (made on the CPU first: every device sees the same
// values), and a result brought back to the CPU for the verdict, which compares with the CPU's f64
// oracle.
std::vector<c10::IValue> on_device(std::vector<c10::IValue> values, const c10::Device& device);
c10::IValue on_cpu(const c10::IValue& v);
// " --backend cuda --device cuda" for a reproduce line: what the options test beyond the defaults.
std::string backend_flags(const CheckOptions& options);

// Never throws for problems of the case itself: they are the outcome. With options.gradients, the
// gradient check below.
CaseOutcome check_case(const FuzzCase& c, const CheckOptions& options);
// The backward mode (fuzz_graphs --backward, gradient_check.cpp): every float parameter and input
// requires grad; the gradients of a random scalar loss over the outputs, computed through the
// compiled training graphs and through LibTorch autograd, compared with the same tolerance and an
// f64 autograd oracle.
CaseOutcome check_case_gradients(const FuzzCase& c, const CheckOptions& options);

}  // namespace tcprof::fuzz
