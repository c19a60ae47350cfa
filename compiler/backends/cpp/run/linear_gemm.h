// Linear layers with constant weights as one GEMM over the flattened rows, against a weight
// prepared once at compile time. LibTorch's linear hands OpenBLAS the [N, K] weight on every call,
// which packs it again each time. Prepared here:
//   - for oneDNN's matmul (run/onednn_linear.h), reordered into the layout its AVX-512 kernels
//     read: 10-16% faster than LibTorch's linear on the GPT's and ViT-B's shapes at one thread;
//   - for MKL's packed GEMM where LibTorch has it (run/mkl_packed_linear.h: PyPI's x86 wheels),
//     packed once, with TCPROF_LINEAR_GEMM=mkl or without oneDNN (12-19% faster than oneDNN 2.6
//     over the GPT and ViT-B, for a packed copy 2-30x the weight);
//   - without either (or with TCPROF_ONEDNN=0 and no MKL), transposed to [K, N] for OpenBLAS, which
//     packs a plain operand faster than a transposed one: 1-3% on the GPT's shapes, 3-8% on ViT-B's.
// The weights are treated as constants, as everywhere in the compiled graph (TorchScript's freeze
// does the same). The preparation is a copy of the weight (memory, and time at every start), so
// the runner makes it only for a GEMM the autotune phase measures or keeps.
#pragma once
#include <memory>
#include <string>

#include <ATen/ATen.h>

#include "compiler/backends/cpp/lower/loop_ir.h"

namespace tcprof {

class OnednnLinear;
class MklPackedLinear;

// TCPROF_LINEAR_GEMM (onednn|mkl|blas): the one GEMM library a prepared linear may take where it
// can run (tests run each against eager; MKL's speed for its memory); "" when unset: oneDNN, else
// MKL, else BLAS.
std::string forced_linear_gemm();

// w [N, K] -> a new contiguous [K, N] (a tiled copy: ATen's strided copy of a transposed weight
// is 3-5x slower).
at::Tensor transposed_weight(const at::Tensor& w);

// Whether a prepared linear will take oneDNN's GEMM, which applies an activation in its own output
// pass (else MKL's or BLAS's, which need the generated epilogue for it).
bool linear_gemm_takes_onednn();

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
  // `activation`: applied to the GEMM's output: in its output pass where oneDNN runs it, else by
  // `epilogue` (bias included, the GEMM then runs without it) or, without one, by LibTorch.
  PreparedLinear(const at::Tensor& w, const at::Tensor* bias, int64_t rows,
                 WindowKernel::Activation activation = WindowKernel::Activation::None,
                 LinearEpilogueFn epilogue = nullptr);
  ~PreparedLinear();
  // x [..., K] float -> contiguous [..., N], equal to activation(at::linear(x, w, bias)) up to rounding.
  at::Tensor operator()(const at::Tensor& x) const;
  // "onednn", "mkl" or "blas": which GEMM runs it.
  const char* method() const;

 private:
  std::unique_ptr<OnednnLinear> onednn_;
  std::unique_ptr<MklPackedLinear> mkl_;
  at::Tensor transposed_, bias_;
  WindowKernel::Activation activation_;
  LinearEpilogueFn epilogue_ = nullptr;  // set only where the GEMM runs without the bias
};

}  // namespace tcprof
