// The optimizer step on a GPU as one CUDA kernel of tcprof's own over every parameter (horizontal
// fusion, as the CPU's fused_optimizer.h): Adam, AdamW and SGD with momentum.
//
// LibTorch's _fused_adam_ (libtorch_fused_optimizer.h) splits a step into several launches (at most
// 36 tensors and 320 blocks of 64K elements each, for Adam's four lists) plus one to advance the
// step counts kept on the device. This step is one launch: the parameters are split into chunks of
// 16,384 elements, one block a chunk (grid-stride past 65,535), each thread moving 4-element vectors
// where the four arrays are 16-byte aligned. The table of pointers and per-parameter scalars
// (bias corrections from each parameter's own step count, kept on the host) goes to the device with
// the launch, through pinned memory, on LibTorch's current stream.
//
// Each element's update is optimizer_update.h's, the same text the CPU kernel compiles. The CUDA
// source is compiled by NVRTC for the device (the CUBIN kept in the kernel cache) or, for CPU
// parameters, run on the CPU in emulation (cuda_emulation.h): the tests compare both with
// torch::optim.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "compiler/optim/fused_optimizer.h"

namespace tcprof {

class CudaFusedOptimizer {
 public:
  // Why `params` cannot take this step ("" when they can): float32, contiguous, all on one device
  // (a GPU, or the CPU for the emulation).
  static std::string unsupported_reason(const std::vector<at::Tensor>& params);

  // Compiles the kernel (NVRTC for the parameters' GPU, through the kernel cache; the system
  // compiler in emulation). Throws Error(Usage) for an unknown kind or parameters
  // unsupported_reason() refuses, NvrtcError or Error(Input) when the kernel cannot be built or
  // loaded (no NVRTC, no driver).
  CudaFusedOptimizer(std::vector<at::Tensor> params, FusedOptimizerOptions options);
  ~CudaFusedOptimizer();

  // The CUDA unit (the same for every parameter set).
  static const std::string& source();
  // "adam over 53 parameters, 3.49 M elements on cuda:0 (tcprof's CUDA kernel, sm_90): lr ..."
  std::string describe() const;
  // How the kernel was built: "CUBIN for sm_90 (NVRTC 13.0, kernel cache hit)", or "run on the CPU
  // in emulation".
  const std::string& built() const { return built_; }

  // Drops the gradients (set_to_none), as the other fused steps and torch::optim do.
  void zero_grad();
  void step();  // parameters without a gradient are skipped, as in torch::optim
  int64_t launches() const { return launches_; }

 private:
  struct Kernel;
  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> state1_, state2_;  // adam: exp_avg, exp_avg_sq; sgd: momentum buffer
  std::vector<int64_t> param_steps_;         // steps each parameter took (those with a gradient)
  FusedOptimizerOptions options_;
  std::unique_ptr<Kernel> kernel_;
  std::string built_;
  std::string target_;  // "sm_90", or "emulated"
  int64_t launches_ = 0;
};

}  // namespace tcprof
