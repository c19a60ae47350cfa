// Times one call's work on its device. On a CUDA device with LibTorch 2.5 or later: two CUDA
// events on the device's current stream, read after the device finished (the GPU time from the
// first queued launch to the last kernel's end, as torch.cuda.Event(enable_timing=True) measures
// it). Elsewhere: the host clock, after waiting for a CUDA device to finish.
#pragma once
#include <cstdint>
#include <memory>

#include <c10/core/Device.h>

namespace tcprof {

class DeviceTimer {
 public:
  explicit DeviceTimer(c10::Device device);
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  void start();
  int64_t stop_ns();  // waits for the device
  // "cuda events" or "host clock": how the times were taken (bench reports it).
  const char* method() const;

 private:
  struct Events;
  c10::Device device_;
  std::unique_ptr<Events> events_;  // null: the host clock
  int64_t start_ns_ = 0;
};

// The host clock (tcprof::now_ns) once `device` has finished the work queued on it: on a GPU the
// time between two such readings is the device's, not the time taken to queue its kernels.
int64_t now_ns_after_device(c10::Device device);

}  // namespace tcprof
