#include "profiler/cupti_buffer_pool.h"

#include <cstdlib>

namespace tcprof {

namespace {
// CUPTI requires 8-byte alignment; a cache line keeps records from straddling one needlessly.
constexpr size_t kAlignment = 64;
}  // namespace

void CuptiBufferPool::Free::operator()(uint8_t* p) const { std::free(p); }

uint8_t* CuptiBufferPool::acquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!free_.empty()) {
    uint8_t* b = free_.back();
    free_.pop_back();
    return b;
  }
  if (owned_.size() >= max_buffers_) {
    ++refusals_;
    return nullptr;
  }
  size_t bytes = (buffer_bytes_ + kAlignment - 1) / kAlignment * kAlignment;
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, bytes));
  if (!p) {
    ++refusals_;
    return nullptr;
  }
  owned_.emplace_back(p);
  return p;
}

void CuptiBufferPool::release(uint8_t* buffer) {
  if (!buffer) return;
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(buffer);
}

size_t CuptiBufferPool::refusals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refusals_;
}

}  // namespace tcprof
