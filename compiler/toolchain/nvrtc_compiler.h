// CUDA C++ -> CUBIN through NVRTC, loaded at run time (as CUPTI is), so one tcprof binary runs with
// or without the CUDA toolkit: libnvrtc is looked up as $TCPROF_NVRTC_LIBRARY, then by soname (the
// copy LibTorch's CUDA build already loaded), then in /usr/local/cuda. No GPU is needed to compile:
// `explain --backend cuda --arch sm_90` and the tests compile every generated kernel here. No
// LibTorch.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"

namespace tcprof {

struct NvrtcApi;

// NVRTC is missing or rejects the source. what() is one line; log() is NVRTC's full message.
class NvrtcError : public Error {
 public:
  NvrtcError(std::string msg, std::string log) : Error(ErrorKind::Internal, std::move(msg)), log_(std::move(log)) {}
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

struct CubinResult {
  std::string cubin;  // the ELF image cuModuleLoadData takes
  std::string log;    // NVRTC's messages (warnings)
  double compile_s = 0;
};

class NvrtcCompiler {
 public:
  // The process-wide compiler; throws NvrtcError naming every place it looked when NVRTC is absent.
  static NvrtcCompiler& shared();
  // Whether NVRTC can be loaded here (for tests and `--version`), without throwing.
  static bool available(std::string* why_not = nullptr);

  // Compiles one unit for `arch` ("sm_90", "sm_80", ...). Throws NvrtcError with the log.
  CubinResult compile(const std::string& source, const std::string& arch, const std::string& name = "tcprof.cu") const;
  // "13.0": part of every cache key of compiled kernels.
  std::string version() const;
  const std::string& library_path() const;

  explicit NvrtcCompiler(std::shared_ptr<const NvrtcApi> api) : api_(std::move(api)) {}

 private:
  std::shared_ptr<const NvrtcApi> api_;
};

// Whether a user's --arch has the form NVRTC takes: sm_XY, digits, an optional a or f suffix.
bool valid_cuda_arch(const std::string& arch);

}  // namespace tcprof
