#include "profiler/cupti_loader.h"

#include <dlfcn.h>

#include <cstdlib>

#include <fmt/format.h>

namespace tcprof {

std::string CuptiApi::error_text(CUptiResult result) const {
  const char* text = nullptr;
  if (get_result_string && get_result_string(result, &text) == CUPTI_SUCCESS && text) return text;
  return fmt::format("CUPTI error {}", static_cast<int>(result));
}

std::vector<std::string> default_cupti_paths() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("TCPROF_CUPTI_LIBRARY"); env && *env) paths.emplace_back(env);
  paths.insert(paths.end(), {"libcupti.so", "libcupti.so.13", "libcupti.so.12",
                             "/usr/local/cuda/lib64/libcupti.so",
                             "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"});
  return paths;
}

namespace {

// Resolves every entry point; returns the name of the first one missing, or empty.
std::string resolve(void* handle, CuptiApi& api) {
  std::string missing;
  auto get = [&](auto& fn, const char* name) {
    void* sym = dlsym(handle, name);
    if (!sym && missing.empty()) missing = name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
  };
  get(api.get_result_string, "cuptiGetResultString");
  get(api.get_timestamp, "cuptiGetTimestamp");
  get(api.activity_enable, "cuptiActivityEnable");
  get(api.activity_disable, "cuptiActivityDisable");
  get(api.activity_register_callbacks, "cuptiActivityRegisterCallbacks");
  get(api.activity_flush_all, "cuptiActivityFlushAll");
  get(api.activity_get_next_record, "cuptiActivityGetNextRecord");
  get(api.activity_get_num_dropped_records, "cuptiActivityGetNumDroppedRecords");
  get(api.activity_push_external_correlation_id, "cuptiActivityPushExternalCorrelationId");
  get(api.activity_pop_external_correlation_id, "cuptiActivityPopExternalCorrelationId");
  get(api.get_callback_name, "cuptiGetCallbackName");
  get(api.finalize, "cuptiFinalize");
  api.activity_enable_runtime_api = reinterpret_cast<decltype(api.activity_enable_runtime_api)>(
      dlsym(handle, "cuptiActivityEnableRuntimeApi"));
  api.activity_enable_driver_api = reinterpret_cast<decltype(api.activity_enable_driver_api)>(
      dlsym(handle, "cuptiActivityEnableDriverApi"));
  return missing;
}

}  // namespace

CuptiLoadResult load_cupti(const std::vector<std::string>& paths) {
  CuptiLoadResult result;
  std::string tried;
  for (const auto& path : paths) {
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      tried += fmt::format("{}{} ({})", tried.empty() ? "" : "; ", path, why ? why : "not found");
      continue;
    }
    auto api = std::make_shared<CuptiApi>();
    std::string missing = resolve(handle, *api);
    if (!missing.empty()) {
      tried += fmt::format("{}{} (has no {})", tried.empty() ? "" : "; ", path, missing);
      dlclose(handle);
      continue;
    }
    api->library_path = path;
    api->handle = handle;
    result.api = std::move(api);
    return result;
  }
  result.error = fmt::format(
      "GPU collection unavailable: libcupti could not be loaded (tried {}); set "
      "TCPROF_CUPTI_LIBRARY to its path",
      tried.empty() ? "no paths" : tried);
  return result;
}

}  // namespace tcprof
