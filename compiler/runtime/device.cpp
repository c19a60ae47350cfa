#include "compiler/runtime/device.h"

#include <ATen/Context.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include "compiler/runtime/torch_info.h"
#include "core/error.h"

namespace tcprof {

c10::Device parse_device(const std::string& text) {
  if (text == "cpu") return c10::Device(c10::kCPU);
  if (text == "cuda") return c10::Device(c10::kCUDA, 0);
  if (text.rfind("cuda:", 0) == 0 && text.size() > 5 && text.size() < 8 &&
      text.find_first_not_of("0123456789", 5) == std::string::npos) {
    return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(std::stoi(text.substr(5))));
  }
  throw Error(ErrorKind::Usage, fmt::format("--device '{}': use cpu, cuda or cuda:N", text));
}

std::string device_unavailable_reason(const c10::Device& device) {
  if (device.is_cpu()) return "";
  if (!at::hasCUDA()) {
    return fmt::format("this tcprof is built against LibTorch {} without CUDA; build it against a "
                       "CUDA LibTorch (docs/gpu.md) to run on a GPU",
                       libtorch_version());
  }
  auto count = static_cast<int>(torch::cuda::device_count());
  if (count == 0) {
    return "no CUDA device is visible (no NVIDIA driver loaded, or CUDA_VISIBLE_DEVICES hides them all)";
  }
  if (device.index() >= count) {
    return fmt::format("there is no {}: this machine has {} CUDA device{} (cuda:0{})", device.str(), count,
                       count == 1 ? "" : "s", count == 1 ? "" : fmt::format("..cuda:{}", count - 1));
  }
  return "";
}

c10::Device require_device(const std::string& text) {
  c10::Device device = parse_device(text);
  std::string why = device_unavailable_reason(device);
  if (!why.empty()) throw Error(ErrorKind::Input, fmt::format("--device {}: {}", text, why));
  return device;
}

}  // namespace tcprof
