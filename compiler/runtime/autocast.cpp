#include "compiler/runtime/autocast.h"

#include <ATen/autocast_mode.h>
#include <fmt/format.h>

#include "compiler/torch_compat.h"
#include "core/error.h"

namespace tcprof {
namespace {

// LibTorch 2.4 replaced the per-device functions (set_cpu_enabled, set_autocast_gpu_dtype...)
// with ones taking the device type; the old ones are deprecated there.
void set_autocast(c10::DeviceType device, bool enabled, c10::ScalarType dtype) {
#if TCPROF_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_dtype(device, dtype);
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}

c10::ScalarType autocast_dtype(c10::DeviceType device) {
#if TCPROF_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                         : at::autocast::get_autocast_cpu_dtype();
#endif
}

}  // namespace

bool autocast_enabled(c10::DeviceType device) {
#if TCPROF_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

c10::ScalarType parse_amp(const std::string& text) {
  if (text == "bf16" || text == "bfloat16") return c10::ScalarType::BFloat16;
  if (text == "off" || text.empty()) return c10::ScalarType::Undefined;
  throw Error(ErrorKind::Usage, fmt::format("unknown --amp '{}' (use bf16 or off; f16 would need a gradient "
                                            "scaler, which train does not have)", text));
}

AutocastScope::AutocastScope(c10::DeviceType device, c10::ScalarType dtype) : device_(device) {
  if (dtype == c10::ScalarType::Undefined) return;
  if (device != c10::DeviceType::CPU && device != c10::DeviceType::CUDA) {
    throw Error(ErrorKind::Usage, fmt::format("--amp runs on cpu or cuda devices, not {}", c10::DeviceTypeName(device)));
  }
  was_enabled_ = autocast_enabled(device);
  previous_dtype_ = autocast_dtype(device);
  set_autocast(device, true, dtype);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  set_autocast(device_, was_enabled_, previous_dtype_);
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
}

}  // namespace tcprof
