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
  int (*device_name)(char*, int, int) = nullptr;
  // Optional, for timing launch sizes (launch_tuning.h); null where this driver lacks them.
  int (*event_create)(void**, unsigned) = nullptr;
  int (*event_record)(void*, void*) = nullptr;
  int (*event_synchronize)(void*) = nullptr;
  int (*event_elapsed)(float*, void*, void*) = nullptr;
  int (*event_destroy)(void*) = nullptr;
  int (*stream_is_capturing)(void*, int*) = nullptr;

  bool can_time() const {
    return event_create && event_record && event_synchronize && event_elapsed && event_destroy && stream_is_capturing;
  }

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
constexpr int kMultiprocessorCount = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT

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
          b.bind(api->device_name, "cuDeviceGetName");
          b.bind_optional(api->event_create, "cuEventCreate");
          b.bind_optional(api->event_record, "cuEventRecord");
          b.bind_optional(api->event_synchronize, "cuEventSynchronize");
          // CUDA 12.8 added _v2 (the same signature, defined for events of other contexts); older
          // drivers have only the first.
          b.bind_optional(api->event_elapsed, "cuEventElapsedTime_v2");
          if (!api->event_elapsed) b.bind_optional(api->event_elapsed, "cuEventElapsedTime");
          b.bind_optional(api->event_destroy, "cuEventDestroy_v2");
          b.bind_optional(api->stream_is_capturing, "cuStreamIsCapturing");
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

std::string CudaDriver::describe(int device_index) const {
  int dev = 0, sms = 0;
  api_->check(api_->device_get(&dev, device_index < 0 ? 0 : device_index), "cuDeviceGet");
  api_->check(api_->device_attribute(&sms, kMultiprocessorCount, dev), "cuDeviceGetAttribute");
  char name[256] = {};
  api_->check(api_->device_name(name, static_cast<int>(sizeof name) - 1, dev), "cuDeviceGetName");
  return fmt::format("{}, {}, {} SMs", name, arch(device_index), sms);
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

bool CudaModule::can_time(void* stream) const {
  if (!api_->can_time()) return false;
  ContextScope scope(*api_, context_);
  int capturing = 0;  // CU_STREAM_CAPTURE_STATUS_NONE
  return api_->stream_is_capturing(stream, &capturing) == 0 && capturing == 0;
}

std::optional<int64_t> CudaModule::time_launches(CudaFunction fn, unsigned grid, unsigned block, const void* params,
                                                 void* stream, int count) const {
  if (!api_->can_time()) return std::nullopt;
  ContextScope scope(*api_, context_);
  void* start = nullptr;
  void* end = nullptr;
  if (api_->event_create(&start, 0) != 0) return std::nullopt;
  if (api_->event_create(&end, 0) != 0) {
    api_->event_destroy(start);
    return std::nullopt;
  }
  float ms = 0;
  int rc = api_->event_record(start, stream);
  void* args[] = {const_cast<void*>(params)};
  for (int i = 0; i < count && rc == 0; ++i) rc = api_->launch(fn, grid, 1, 1, block, 1, 1, 0, stream, args, nullptr);
  if (rc == 0) rc = api_->event_record(end, stream);
  if (rc == 0) rc = api_->event_synchronize(end);
  if (rc == 0) rc = api_->event_elapsed(&ms, start, end);
  api_->event_destroy(start);
  api_->event_destroy(end);
  if (rc != 0) return std::nullopt;
  return static_cast<int64_t>(static_cast<double>(ms) * 1e6);
}

}  // namespace tcprof
