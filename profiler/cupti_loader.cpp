#include "profiler/cupti_loader.h"

#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "core/vendor_library.h"

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

void bind_all(SymbolBinder& b, CuptiApi& api) {
  b.bind(api.get_result_string, "cuptiGetResultString");
  b.bind(api.get_timestamp, "cuptiGetTimestamp");
  b.bind(api.activity_enable, "cuptiActivityEnable");
  b.bind(api.activity_disable, "cuptiActivityDisable");
  b.bind(api.activity_register_callbacks, "cuptiActivityRegisterCallbacks");
  b.bind(api.activity_flush_all, "cuptiActivityFlushAll");
  b.bind(api.activity_get_next_record, "cuptiActivityGetNextRecord");
  b.bind(api.activity_get_num_dropped_records, "cuptiActivityGetNumDroppedRecords");
  b.bind(api.activity_push_external_correlation_id, "cuptiActivityPushExternalCorrelationId");
  b.bind(api.activity_pop_external_correlation_id, "cuptiActivityPopExternalCorrelationId");
  b.bind(api.get_callback_name, "cuptiGetCallbackName");
  b.bind(api.finalize, "cuptiFinalize");
  b.bind_optional(api.activity_enable_runtime_api, "cuptiActivityEnableRuntimeApi");
  b.bind_optional(api.activity_enable_driver_api, "cuptiActivityEnableDriverApi");
}

}  // namespace

CuptiLoadResult load_cupti(const std::vector<std::string>& paths) {
  CuptiLoadResult result;
  auto api = std::make_shared<CuptiApi>();
  std::string tried;
  std::optional<VendorLibrary> lib = open_vendor_library(paths, [&](SymbolBinder& b) { bind_all(b, *api); }, &tried);
  if (!lib) {
    result.error = fmt::format(
        "GPU collection unavailable: libcupti could not be loaded (tried {}); set "
        "TCPROF_CUPTI_LIBRARY to its path",
        tried);
    return result;
  }
  api->library_path = lib->path;
  api->handle = lib->handle;
  result.api = std::move(api);
  return result;
}

}  // namespace tcprof
