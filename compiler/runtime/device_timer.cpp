#include "compiler/runtime/device_timer.h"

#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/cuda.h>

#include "compiler/torch_compat.h"
#include "core/clock.h"

// c10::Event can read the time between two events from LibTorch 2.5 on (a device-generic API, so
// no CUDA header is needed here); 1.13 has no elapsedTime.
#define TCPROF_DEVICE_EVENTS TCPROF_TORCH_AT_LEAST(2, 5)

namespace tcprof {

#if TCPROF_DEVICE_EVENTS
struct DeviceTimer::Events {
  // BACKEND_DEFAULT: CUDA events that record time (PYTORCH_DEFAULT disables timing).
  c10::Event begin{c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT};
  c10::Event end{c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT};
  c10::impl::VirtualGuardImpl guard{c10::DeviceType::CUDA};
};
#else
struct DeviceTimer::Events {};
#endif

DeviceTimer::DeviceTimer(c10::Device device) : device_(device) {
#if TCPROF_DEVICE_EVENTS
  if (device.is_cuda()) events_ = std::make_unique<Events>();
#endif
}

DeviceTimer::~DeviceTimer() = default;

void DeviceTimer::start() {
#if TCPROF_DEVICE_EVENTS
  if (events_) {
    events_->begin.record(events_->guard.getStream(device_));
    return;
  }
#endif
  start_ns_ = now_ns();
}

int64_t DeviceTimer::stop_ns() {
#if TCPROF_DEVICE_EVENTS
  if (events_) {
    events_->end.record(events_->guard.getStream(device_));
    events_->end.synchronize();
    return static_cast<int64_t>(events_->begin.elapsedTime(events_->end) * 1e6);  // ms -> ns
  }
#endif
  return now_ns_after_device(device_) - start_ns_;
}

int64_t now_ns_after_device(c10::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
  return now_ns();
}

const char* DeviceTimer::method() const { return events_ ? "cuda events" : "host clock"; }

}  // namespace tcprof
