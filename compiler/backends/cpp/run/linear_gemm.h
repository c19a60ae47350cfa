// Linear layers with constant weights as one GEMM over the flattened rows, against a weight
// prepared once at compile time. LibTorch's linear hands OpenBLAS the [N, K] weight on every call,
// which packs it again each time. Prepared here:
//   - for oneDNN's matmul (run/onednn_linear.h), reordered into the layout its AVX-512 kernels
//     read: 10-16% faster than LibTorch's linear on the GPT's and ViT-B's shapes at one thread;
//   - for MKL's packed GEMM where LibTorch has it (run/mkl_packed_linear.h: PyPI's x86 wheels),
//     packed once, with TCPROF_LINEAR_GEMM=mkl or =fastest, or without oneDNN (12-19% faster than
//     oneDNN 2.6 over the GPT and ViT-B on the Xeon, for a packed copy 2-30x the weight);
//   - without either (or with TCPROF_ONEDNN=0 and no MKL), transposed to [K, N] for OpenBLAS, which
//     packs a plain operand faster than a transposed one: 1-3% on the GPT's shapes, 3-8% on ViT-B's.
// Which of these runs a linear, and whether an activation after it runs in oneDNN's post-op or in
// the generated epilogue, the autotune phase decides by timing them (LinearGemmMethod).
// The weights are treated as constants, as everywhere in the compiled graph (TorchScript's freeze
// does the same). The preparation is a copy of the weight (memory, and time at every start), so
// the runner makes it only for a GEMM the autotune phase measures or keeps.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "compiler/backends/cpp/lower/loop_ir.h"

namespace tcprof {

class OnednnLinear;
class MklPackedLinear;

// How a prepared linear runs its GEMM, and the bias and activation after it.
enum class LinearGemmMethod : int {
  OneDnn = 0,          // oneDNN's matmul, bias and activation in its output pass (its post-op)
  OneDnnEpilogue = 1,  // oneDNN's matmul alone, then the generated epilogue (bias + activation)
  Mkl = 2,             // MKL's packed GEMM, with the generated epilogue after it for an activation
  Blas = 3,            // BLAS against the transposed weight, likewise
};
// "onednn", "onednn+epilogue", "mkl", "blas".
const char* linear_gemm_method_name(LinearGemmMethod method);

// TCPROF_LINEAR_GEMM: "onednn", "mkl" or "blas" (that library alone where it can run: tests run each
// against eager), "fastest" (every library, timed per linear: MKL's packed copies included) or ""
// when unset (oneDNN, else MKL, else BLAS).
std::string forced_linear_gemm();

// The methods the autotune phase races for one linear, the planned one first (under
// TCPROF_AUTOTUNE=kernels the only one run). `epilogue`: a generated epilogue exists for it (a
// linear with an activation), which oneDNN's matmul can also take instead of its own post-op: on
// an AVX2 EPYC its matmul with the GELU post-op took 5-8% longer than with the epilogue.
std::vector<LinearGemmMethod> linear_gemm_methods(bool epilogue);

// w [N, K] -> a new contiguous [K, N] (a tiled copy: ATen's strided copy of a transposed weight
// is 3-5x slower).
at::Tensor transposed_weight(const at::Tensor& w);

// x [..., K] @ wt [K, N] (+ bias [N]) -> contiguous [..., N], as one GEMM over the flattened rows.
at::Tensor linear_transposed(const at::Tensor& x, const at::Tensor& wt, const at::Tensor* bias);

// y = activation(y), as LibTorch's gelu computes it.
void apply_activation(at::Tensor& y, WindowKernel::Activation activation);

// The generated bias + activation pass over a GEMM's [rows, N] output, in place
// (codegen's generate_linear_epilogue): in = {y, bias or null}, out = {y}, sizes = {rows}.
using LinearEpilogueFn = void (*)(const void* const*, void* const*, const int64_t*, const int64_t*);

class PreparedLinear {
 public:
  // w [N, K], bias [N] or null, float on the CPU; `rows`: the compiled input's row count;
  // `activation`: applied to the GEMM's output: in its output pass (LinearGemmMethod::OneDnn), by
  // `epilogue` (bias included, the GEMM then runs without it) or, without one, by LibTorch.
  // `method`: the one to prepare (std::runtime_error where it cannot run here: no oneDNN matmul
  // for the shape, no MKL in this LibTorch, no epilogue for OneDnnEpilogue); without one, the
  // first of linear_gemm_methods() that can, else BLAS.
  PreparedLinear(const at::Tensor& w, const at::Tensor* bias, int64_t rows,
                 WindowKernel::Activation activation = WindowKernel::Activation::None,
                 LinearEpilogueFn epilogue = nullptr, std::optional<LinearGemmMethod> method = std::nullopt);
  ~PreparedLinear();
  // x [..., K] float -> contiguous [..., N], equal to activation(at::linear(x, w, bias)) up to rounding.
  at::Tensor operator()(const at::Tensor& x) const;
  // linear_gemm_method_name(kind()): which GEMM runs it, and how its activation is applied.
  const char* method() const;
  LinearGemmMethod kind() const { return method_; }

 private:
  std::unique_ptr<OnednnLinear> onednn_;
  std::unique_ptr<MklPackedLinear> mkl_;
  at::Tensor transposed_, bias_;
  WindowKernel::Activation activation_;
  LinearGemmMethod method_ = LinearGemmMethod::Blas;
  LinearEpilogueFn epilogue_ = nullptr;  // set only where the GEMM runs without the bias
  bool prepare(LinearGemmMethod method, const at::Tensor& w, const at::Tensor* bias, int64_t rows, LinearEpilogueFn epilogue);
};

}  // namespace tcprof
