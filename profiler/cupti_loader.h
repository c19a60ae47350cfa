// Loads libcupti at run time: tcprof is built against the CUDA toolkit's CUPTI headers (types
// only) but never links libcupti, so the binary runs where CUDA is absent and says why GPU
// collection is unavailable instead of failing to start.
#pragma once
#include <cupti.h>

#include <memory>
#include <string>
#include <vector>

namespace tcprof {

// The CUPTI entry points tcprof uses, resolved with dlsym. Every pointer is non-null in a table
// returned by load_cupti(), but for those marked optional.
struct CuptiApi {
  CUptiResult (*get_result_string)(CUptiResult, const char**) = nullptr;
  CUptiResult (*get_timestamp)(uint64_t*) = nullptr;
  CUptiResult (*activity_enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*activity_disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*activity_register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*activity_flush_all)(uint32_t) = nullptr;
  CUptiResult (*activity_get_next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*activity_get_num_dropped_records)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult (*activity_push_external_correlation_id)(CUpti_ExternalCorrelationKind,
                                                       uint64_t) = nullptr;
  CUptiResult (*activity_pop_external_correlation_id)(CUpti_ExternalCorrelationKind,
                                                      uint64_t*) = nullptr;
  CUptiResult (*get_callback_name)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;
  CUptiResult (*finalize)() = nullptr;
  // Optional (null where the library lacks them: newer CUPTIs only): API records for chosen
  // callback ids only, which --profile summary uses instead of every runtime and driver call.
  CUptiResult (*activity_enable_runtime_api)(CUpti_CallbackId, uint8_t) = nullptr;
  CUptiResult (*activity_enable_driver_api)(CUpti_CallbackId, uint8_t) = nullptr;

  std::string library_path;  // the file that was loaded
  void* handle = nullptr;    // dlopen handle; the library stays loaded for the process

  // "CUPTI_ERROR_NOT_INITIALIZED" etc., or the number when the string is unknown.
  std::string error_text(CUptiResult result) const;
};

struct CuptiLoadResult {
  std::shared_ptr<const CuptiApi> api;  // null when unavailable
  std::string error;                    // why it is unavailable, one line, names what was tried
  bool available() const { return api != nullptr; }
};

// Libraries tried by default, in order: $TCPROF_CUPTI_LIBRARY, then libcupti.so(.13) on the
// loader's path, then the CUDA toolkit's usual locations.
std::vector<std::string> default_cupti_paths();

// Loads the first of `paths` that opens and has every entry point. Never throws.
CuptiLoadResult load_cupti(const std::vector<std::string>& paths = default_cupti_paths());

}  // namespace tcprof
