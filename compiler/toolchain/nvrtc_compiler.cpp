#include "compiler/toolchain/nvrtc_compiler.h"

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "core/vendor_library.h"

namespace tcprof {

// The entry points tcprof uses, with NVRTC's C signatures (nvrtcResult is an int enum; 0 success).
struct NvrtcApi {
  using Program = void*;
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*log_size)(Program, size_t*) = nullptr;
  int (*log)(Program, char*) = nullptr;
  int (*cubin_size)(Program, size_t*) = nullptr;
  int (*cubin)(Program, char*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  int (*version)(int*, int*) = nullptr;
  const char* (*error_string)(int) = nullptr;
  std::string path;
};

namespace {

std::vector<std::string> nvrtc_paths() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("TCPROF_NVRTC_LIBRARY"); env && *env) paths.emplace_back(env);
  paths.insert(paths.end(), {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"});
  return paths;
}

std::shared_ptr<const NvrtcApi> load(std::string* error) {
  auto api = std::make_shared<NvrtcApi>();
  std::string tried;
  std::optional<VendorLibrary> lib = open_vendor_library(
      nvrtc_paths(),
      [&](SymbolBinder& b) {
        b.bind(api->create, "nvrtcCreateProgram");
        b.bind(api->compile, "nvrtcCompileProgram");
        b.bind(api->log_size, "nvrtcGetProgramLogSize");
        b.bind(api->log, "nvrtcGetProgramLog");
        b.bind(api->cubin_size, "nvrtcGetCUBINSize");
        b.bind(api->cubin, "nvrtcGetCUBIN");
        b.bind(api->destroy, "nvrtcDestroyProgram");
        b.bind(api->version, "nvrtcVersion");
        b.bind(api->error_string, "nvrtcGetErrorString");
      },
      &tried);
  if (!lib) {
    *error = fmt::format("NVRTC could not be loaded (tried {}). Install the CUDA toolkit's NVRTC (the CUDA "
                         "PyTorch wheel brings it as nvidia-cuda-nvrtc) or set TCPROF_NVRTC_LIBRARY to libnvrtc.so",
                         tried);
    return nullptr;
  }
  api->path = lib->path;
  return api;  // never closed: kernels compiled by it may be in use until exit
}

struct Loaded {
  std::shared_ptr<const NvrtcApi> api;
  std::string error;
};

const Loaded& loaded() {
  static const Loaded l = [] {
    Loaded out;
    out.api = load(&out.error);
    return out;
  }();
  return l;
}

}  // namespace

bool valid_cuda_arch(const std::string& arch) {
  if (arch.size() < 5 || arch.size() > 7 || arch.compare(0, 3, "sm_") != 0) return false;
  for (size_t i = 3; i < arch.size(); ++i) {
    char c = arch[i];
    bool last_letter = i + 1 == arch.size() && (c == 'a' || c == 'f');  // sm_90a, sm_100f
    if (!(c >= '0' && c <= '9') && !last_letter) return false;
  }
  return true;
}

bool NvrtcCompiler::available(std::string* why_not) {
  if (loaded().api) return true;
  if (why_not) *why_not = loaded().error;
  return false;
}

NvrtcCompiler& NvrtcCompiler::shared() {
  if (!loaded().api) throw NvrtcError(loaded().error, "");
  static NvrtcCompiler compiler(loaded().api);
  return compiler;
}

std::string NvrtcCompiler::version() const {
  int major = 0, minor = 0;
  api_->version(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

const std::string& NvrtcCompiler::library_path() const { return api_->path; }

CubinResult NvrtcCompiler::compile(const std::string& source, const std::string& arch, const std::string& name) const {
  if (!valid_cuda_arch(arch)) {
    throw Error(ErrorKind::Usage, fmt::format("'{}' is not a CUDA architecture: give it as sm_XY, e.g. --arch sm_90 (H100) "
                                              "or sm_80 (A100)", arch));
  }
  const auto start = std::chrono::steady_clock::now();
  NvrtcApi::Program prog = nullptr;
  if (int rc = api_->create(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr); rc != 0) {
    throw NvrtcError(fmt::format("NVRTC could not create a program: {}", api_->error_string(rc)), "");
  }
  const std::string arch_flag = "--gpu-architecture=" + arch;
  // No contraction of a * b + c into an FMA unless the source asks (fmaf): a row kernel recomputes
  // values in each of its phases, and contraction that differs between phases changes results (the
  // emulation compiles with -ffp-contract=off for the same reason).
  const char* options[] = {arch_flag.c_str(), "--std=c++17", "-default-device", "--fmad=false"};
  const int rc = api_->compile(prog, 4, options);
  CubinResult result;
  size_t size = 0;
  if (api_->log_size(prog, &size) == 0 && size > 1) {
    result.log.resize(size);
    api_->log(prog, result.log.data());
    result.log.resize(size - 1);
  }
  if (rc != 0) {
    api_->destroy(&prog);
    throw NvrtcError(fmt::format("NVRTC rejected the generated CUDA source for {}: {}", arch, api_->error_string(rc)), result.log);
  }
  size = 0;
  api_->cubin_size(prog, &size);
  result.cubin.resize(size);
  if (size > 0) api_->cubin(prog, result.cubin.data());
  api_->destroy(&prog);
  result.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace tcprof
