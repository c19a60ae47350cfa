// A linear layer with a constant weight through oneDNN's matmul: the weight reordered once into
// the blocked layout its brgemm kernels read, so no call packs it again, and the bias added in the
// kernel's output pass. On this Zen 4 at one thread it runs at 115 GFLOP/s on the GPT's shapes
// where OpenBLAS runs at 100-107 (against a plain or a transposed weight alike), and at 108-110
// against 91-98 on ViT-B's. Only this file and onednn_convolution.cpp include oneDNN
// (through run/onednn_support.h).
#pragma once
#include <memory>

#include <ATen/core/Tensor.h>

#include "compiler/backends/cpp/lower/loop_ir.h"

namespace tcprof {

class OnednnLinear {
 public:
  using Activation = WindowKernel::Activation;
  // w [N, K] and bias [N] (optional), float; `rows`: the row count of the compiled input, which
  // the weight's layout is chosen for; `activation`: applied in the output pass (oneDNN's eltwise
  // post-op). Throws std::runtime_error where this oneDNN has no matmul for them or tcprof was
  // built without oneDNN.
  OnednnLinear(const at::Tensor& w, const at::Tensor* bias, int64_t rows, Activation activation = Activation::None);
  ~OnednnLinear();
  OnednnLinear(const OnednnLinear&) = delete;
  OnednnLinear& operator=(const OnednnLinear&) = delete;

  // x [..., K] float -> contiguous [..., N]. Another row count than the compiled one gets its own
  // primitive over the same packed weight (created on first need), or LibTorch's linear where
  // oneDNN has none for that layout.
  at::Tensor operator()(const at::Tensor& x) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tcprof
