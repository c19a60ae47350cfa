#include "compiler/backends/cuda/cuda_driver.h"

#include <optional>

#include <fmt/format.h>

#include "core/vendor_library.h"

namespace tcprof {

// The driver entry points tcprof uses (CUresult is an int enum; 0 success). The _v2 names are the
// ABI every driver since CUDA 4 exports for these calls.
struct CudaDriverApi {
  int (*init)(unsigned) = nullptr;
  int (*device_get)(int*, int) = nullptr;
  int (*device_attribute)(int*, int, int) = nullptr;
  int (*primary_ctx_retain)(void**, int) = nullptr;
  int (*ctx_push)(void*) = nullptr;
  int (*ctx_pop)(void**) = nullptr;
  int (*module_load_data)(void**, const void*) = nullptr;
  int (*module_unload)(void*) = nullptr;
  int (*module_function)(void**, void*, const char*) = nullptr;
  int (*launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**) = nullptr;
  int (*error_string)(int, const char**) = nullptr;

  std::string error(int rc) const {
    const char* text = nullptr;
    if (error_string && error_string(rc, &text) == 0 && text) return text;
    return fmt::format("CUDA driver error {}", rc);
  }
  void check(int rc, const std::string& what) const {
    if (rc != 0) throw Error(ErrorKind::Input, fmt::format("{} failed: {}", what, error(rc)));
  }
};

namespace {

// Pushes the device's primary context for the scope of a driver call.
class ContextScope {
 public:
  ContextScope(const CudaDriverApi& api, void* ctx) : api_(api) { api_.check(api_.ctx_push(ctx), "cuCtxPushCurrent"); }
  ~ContextScope() {
    void* popped = nullptr;
    api_.ctx_pop(&popped);
  }

 private:
  const CudaDriverApi& api_;
};

constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;

}  // namespace

CudaDriver& CudaDriver::shared() {
  static CudaDriver driver([] {
    auto api = std::make_shared<CudaDriverApi>();
    std::string tried;
    std::optional<VendorLibrary> lib = open_vendor_library(
        {"libcuda.so.1"},
        [&](SymbolBinder& b) {
          b.bind(api->init, "cuInit");
          b.bind(api->device_get, "cuDeviceGet");
          b.bind(api->device_attribute, "cuDeviceGetAttribute");
          b.bind(api->primary_ctx_retain, "cuDevicePrimaryCtxRetain");
          b.bind(api->ctx_push, "cuCtxPushCurrent_v2");
          b.bind(api->ctx_pop, "cuCtxPopCurrent_v2");
          b.bind(api->module_load_data, "cuModuleLoadData");
          b.bind(api->module_unload, "cuModuleUnload");
          b.bind(api->module_function, "cuModuleGetFunction");
          b.bind(api->launch, "cuLaunchKernel");
          b.bind(api->error_string, "cuGetErrorString");
        },
        &tried);
    if (!lib) {
      throw Error(ErrorKind::Input, fmt::format("the CUDA driver could not be loaded (tried {}). The cuda backend runs "
                                                "graphs on a GPU through it; install or update the NVIDIA driver",
                                                tried));
    }
    api->check(api->init(0), "cuInit");
    return CudaDriver(std::move(api));
  }());
  return driver;
}

void* CudaDriver::primary_context(int device_index) const {
  int dev = 0;
  api_->check(api_->device_get(&dev, device_index < 0 ? 0 : device_index), "cuDeviceGet");
  void* ctx = nullptr;
  api_->check(api_->primary_ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  return ctx;  // retained for the process: LibTorch holds it as long
}

std::string CudaDriver::arch(int device_index) const {
  int dev = 0, major = 0, minor = 0;
  api_->check(api_->device_get(&dev, device_index < 0 ? 0 : device_index), "cuDeviceGet");
  api_->check(api_->device_attribute(&major, kComputeCapabilityMajor, dev), "cuDeviceGetAttribute");
  api_->check(api_->device_attribute(&minor, kComputeCapabilityMinor, dev), "cuDeviceGetAttribute");
  return fmt::format("sm_{}{}", major, minor);
}

std::shared_ptr<CudaModule> CudaDriver::load(const std::string& cubin, int device_index) const {
  void* ctx = primary_context(device_index);
  ContextScope scope(*api_, ctx);
  void* module = nullptr;
  api_->check(api_->module_load_data(&module, cubin.data()), "cuModuleLoadData (the generated kernels' CUBIN)");
  return std::make_shared<CudaModule>(api_, ctx, module);
}

CudaModule::~CudaModule() {
  void* pushed = nullptr;
  if (api_->ctx_push(context_) == 0) {
    api_->module_unload(module_);
    api_->ctx_pop(&pushed);
  }
}

CudaFunction CudaModule::function(const std::string& name) const {
  void* fn = nullptr;
  api_->check(api_->module_function(&fn, module_, name.c_str()), "cuModuleGetFunction " + name);
  return fn;
}

void CudaModule::launch(CudaFunction fn, unsigned grid, unsigned block, const void* params, void* stream) const {
  ContextScope scope(*api_, context_);
  void* args[] = {const_cast<void*>(params)};
  api_->check(api_->launch(fn, grid, 1, 1, block, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel");
}

}  // namespace tcprof
