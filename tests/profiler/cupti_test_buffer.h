// Builds CUPTI activity buffers in memory the way CUPTI fills them: records of the toolkit's
// struct versions back to back, each starting on an 8-byte boundary (every record struct is
// declared with 8-byte alignment and a size that is a multiple of 8).
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "profiler/cupti_record_types.h"

namespace tcprof::testing {

class CuptiTestBuffer {
 public:
  template <typename Record>
  CuptiTestBuffer& add(const Record& record) {
    static_assert(sizeof(Record) % 8 == 0, "CUPTI records are padded to 8 bytes");
    size_t at = bytes_;
    bytes_ += sizeof(Record);
    words_.resize((bytes_ + 7) / 8);
    std::memcpy(reinterpret_cast<uint8_t*>(words_.data()) + at, &record, sizeof(Record));
    return *this;
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(words_.data()); }
  size_t valid_bytes() const { return bytes_; }

 private:
  std::vector<uint64_t> words_;  // uint64_t storage: the buffer starts 8-byte aligned
  size_t bytes_ = 0;
};

inline cupti::KernelRecord kernel_record(const char* name, uint32_t correlation, uint64_t start,
                                         uint64_t end, uint32_t device = 0, uint32_t stream = 7) {
  cupti::KernelRecord k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.correlationId = correlation;
  k.start = start;
  k.end = end;
  k.deviceId = device;
  k.streamId = stream;
  k.gridX = 128, k.gridY = 2, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  return k;
}

inline cupti::ExternalCorrelationRecord external_record(
    uint32_t correlation, uint64_t external_id,
    CUpti_ExternalCorrelationKind kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
  cupti::ExternalCorrelationRecord e{};
  e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = kind;
  e.externalId = external_id;
  e.correlationId = correlation;
  return e;
}

inline cupti::ApiRecord runtime_record(uint32_t cbid, uint32_t correlation, uint64_t start,
                                       uint64_t end, uint32_t thread = 4242,
                                       CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_RUNTIME) {
  cupti::ApiRecord a{};
  a.kind = kind;
  a.cbid = cbid;
  a.correlationId = correlation;
  a.start = start;
  a.end = end;
  a.processId = 1;
  a.threadId = thread;
  return a;
}

}  // namespace tcprof::testing
