// Mixed precision for training (`train --amp bf16`): LibTorch's autocast around the forward pass
// and the loss, as `with torch.autocast(device, dtype=torch.bfloat16):` does in Python. Matmuls,
// linears and convolutions run in bf16; reductions and the loss stay in f32; parameters and their
// gradients stay f32, so the optimizer step is unchanged.
#pragma once
#include <string>

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace tcprof {

// "bf16" -> BFloat16; "off" -> Undefined (no autocast). Throws Error(Usage) for anything else.
c10::ScalarType parse_amp(const std::string& text);

// Whether autocast is on for `device` in this thread.
bool autocast_enabled(c10::DeviceType device);

// Enables autocast for `device` while alive. The destructor disables it and clears autocast's cache
// of lower-precision weight copies: kept across steps, a copy made before an optimizer step would
// be used after it (Python's autocast clears it on exit for the same reason).
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device, c10::ScalarType dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool active_ = false, was_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Undefined;
};

}  // namespace tcprof
