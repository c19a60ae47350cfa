// The CUDA driver, loaded at run time (libcuda.so.1, as CUPTI is): the device's architecture, CUBIN
// modules in the device's primary context (the one LibTorch uses), and kernel launches on the
// default stream. No LibTorch, no CUDA headers: one tcprof binary runs with or without a GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"

namespace tcprof {

struct CudaDriverApi;
using CudaFunction = void*;  // CUfunction

class CudaModule {
 public:
  CudaModule(std::shared_ptr<const CudaDriverApi> api, void* context, void* module) : api_(std::move(api)), context_(context), module_(module) {}
  ~CudaModule();
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;
  CudaFunction function(const std::string& name) const;  // throws Error naming the kernel
  // One launch on `stream` (a cudaStream_t; null: the default stream) of a kernel whose only
  // parameter is the bytes at `params` (tc_params).
  void launch(CudaFunction fn, unsigned grid, unsigned block, const void* params, void* stream) const;
  // Whether launches on `stream` can be timed now without changing what the stream does: not
  // while it is captured into a CUDA graph, nor with a driver without events.
  bool can_time(void* stream) const;
  // The device's time of `count` such launches back to back on `stream`, in nanoseconds, between
  // two events (a wait for the second). Nothing when one was refused (a block larger than the
  // kernel's registers allow).
  std::optional<int64_t> time_launches(CudaFunction fn, unsigned grid, unsigned block, const void* params, void* stream,
                                       int count) const;

 private:
  std::shared_ptr<const CudaDriverApi> api_;
  void* context_;
  void* module_;
};

class CudaDriver {
 public:
  // Throws Error(Input) naming what is missing when the driver cannot be loaded or initialised.
  static CudaDriver& shared();
  // "sm_90" for the device's compute capability 9.0.
  std::string arch(int device_index) const;
  // What a launch's timing holds for: "NVIDIA H200, sm_90, 132 SMs".
  std::string describe(int device_index) const;
  std::shared_ptr<CudaModule> load(const std::string& cubin, int device_index) const;

  explicit CudaDriver(std::shared_ptr<const CudaDriverApi> api) : api_(std::move(api)) {}

 private:
  void* primary_context(int device_index) const;
  std::shared_ptr<const CudaDriverApi> api_;
};

}  // namespace tcprof
