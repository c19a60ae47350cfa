// A linear layer with a constant weight through MKL's packed GEMM, by LibTorch's own operators
// (mkl::_mkl_reorder_linear_weight once, mkl::_mkl_linear per call: what Inductor's freezing
// emits). Only LibTorch builds with MKL register them: PyPI's x86 wheels do, Debian's (OpenBLAS)
// does not. On this Xeon at one thread MKL's packed GEMM runs at 204-215 GFLOP/s on ViT-B's and
// the GPT's shapes, where Debian's oneDNN 2.6 (the one tcprof links beside a wheel, whose own
// oneDNN is hidden) runs at 163-186. Its packed copy of a weight is 2-30x the weight, so
// run/linear_gemm.cpp takes it where asked (TCPROF_LINEAR_GEMM=mkl) or where oneDNN is missing.
#pragma once
#include <ATen/core/Tensor.h>

namespace tcprof {

class MklPackedLinear {
 public:
  // Whether this LibTorch has the operators (looked up once).
  static bool available();
  // w [N, K] and bias [N] (optional), float; `rows`: the row count the weight is packed for
  // (other row counts run LibTorch's linear inside the operator). Throws std::runtime_error when
  // the operators are missing.
  MklPackedLinear(const at::Tensor& w, const at::Tensor* bias, int64_t rows);
  // x [..., K] float -> [..., N].
  at::Tensor operator()(const at::Tensor& x) const;

 private:
  at::Tensor weight_, packed_, bias_;
  int64_t rows_;
};

}  // namespace tcprof
