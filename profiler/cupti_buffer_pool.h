// A bounded pool of CUPTI activity buffers. CUPTI asks for a buffer whenever it has records to
// store; when every buffer is in flight the pool says no, CUPTI drops records (and counts them,
// which the collector stores) rather than tcprof growing without bound.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace tcprof {

class CuptiBufferPool {
 public:
  CuptiBufferPool(size_t buffer_bytes, size_t max_buffers)
      : buffer_bytes_(buffer_bytes), max_buffers_(max_buffers) {}

  size_t buffer_bytes() const { return buffer_bytes_; }

  // A buffer aligned for CUPTI records, or null when max_buffers are handed out already.
  uint8_t* acquire();
  void release(uint8_t* buffer);
  size_t refusals() const;

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  using Buffer = std::unique_ptr<uint8_t, Free>;

  size_t buffer_bytes_, max_buffers_;
  mutable std::mutex mutex_;
  std::vector<Buffer> owned_;     // every buffer ever allocated (at most max_buffers_)
  std::vector<uint8_t*> free_;
  size_t refusals_ = 0;
};

}  // namespace tcprof
