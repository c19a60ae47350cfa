// Parameters and gradients for the optimizer tests (the generated fused step and LibTorch's fused
// kernels, each against torch::optim).
#pragma once
#include <cstdint>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/cuda.h>

namespace tcprof::testing {

// Sizes around the generated kernel's chunk (16384) and SIMD widths, and a scalar; made on the
// CPU (the same values everywhere), then moved to `device`.
inline std::vector<at::Tensor> optimizer_params(uint64_t seed, c10::Device device = c10::kCPU) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<at::Tensor> params;
  for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{{7}, {33, 17}, {16384}, {16385}, {3, 128, 129}, {}}) {
    params.push_back(at::randn(shape, gen).to(device));
  }
  return params;
}

// The CPU, and the first GPU when there is one: each optimizer test runs on both.
inline std::vector<c10::Device> optimizer_devices() {
  std::vector<c10::Device> out{c10::kCPU};
  if (torch::cuda::is_available()) out.emplace_back(c10::kCUDA, 0);
  return out;
}

inline std::vector<at::Tensor> clones(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> out;
  for (const auto& p : params) out.push_back(p.clone());
  return out;
}

// Gives both parameter sets the same gradient for step `step`; parameter 1 gets none on odd
// steps (it must not move, and its own step count and momentum must not advance).
inline void set_same_grads(std::vector<at::Tensor>& a, std::vector<at::Tensor>& b, int step) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1000 + step);
  for (size_t i = 0; i < a.size(); ++i) {
    if (i == 1 && step % 2 == 1) {
      a[i].mutable_grad() = at::Tensor();
      b[i].mutable_grad() = at::Tensor();
      continue;
    }
    at::Tensor g = (at::randn(a[i].sizes(), gen) * static_cast<double>(i + 1)).to(a[i].device());
    a[i].mutable_grad() = g.clone();
    b[i].mutable_grad() = g.clone();
  }
}

}  // namespace tcprof::testing
