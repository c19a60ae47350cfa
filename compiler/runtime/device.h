// `--device cpu|cuda|cuda:N`: parsing, and whether this build and machine can run on it.
#pragma once
#include <string>

#include <c10/core/Device.h>

namespace tcprof {

// "cpu", "cuda" (device 0) or "cuda:N". Throws Error(Usage) naming the accepted spellings.
c10::Device parse_device(const std::string& text);

// Why `device` cannot be used here ("" when it can): no CUDA in this LibTorch build, no visible
// device (no driver, CUDA_VISIBLE_DEVICES empty), or an index past the last device.
std::string device_unavailable_reason(const c10::Device& device);

// parse_device + device_unavailable_reason: throws Error(Input) (exit 2) with the reason.
c10::Device require_device(const std::string& text);

}  // namespace tcprof
