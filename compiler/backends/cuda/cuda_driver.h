// The CUDA driver, loaded at run time (libcuda.so.1, as CUPTI is): the device's architecture, CUBIN
// modules in the device's primary context (the one LibTorch uses), and kernel launches on the
// default stream. No LibTorch, no CUDA headers: one tcprof binary runs with or without a GPU.
#pragma once
#include <cstddef>
#include <memory>
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
  std::shared_ptr<CudaModule> load(const std::string& cubin, int device_index) const;

  explicit CudaDriver(std::shared_ptr<const CudaDriverApi> api) : api_(std::move(api)) {}

 private:
  void* primary_context(int device_index) const;
  std::shared_ptr<const CudaDriverApi> api_;
};

}  // namespace tcprof
