// MD5 (RFC 1321), only to check the `has_payload` digests PyTorch writes into TORCH_TRACE logs.
// Not for anything that needs a secure hash: sha256.h is for that.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace tcprof {

// Incremental: a payload is fed line by line as the log is read, never held twice.
class Md5 {
 public:
  Md5() { reset(); }
  void reset();
  void update(std::string_view data);
  std::string hex_digest();  // finishes the digest; call reset() before reusing

 private:
  void block(const unsigned char* p);
  uint32_t state_[4];
  uint64_t length_ = 0;  // bytes fed so far
  unsigned char buffer_[64];
  size_t buffered_ = 0;
};

std::string md5_hex(std::string_view data);

}  // namespace tcprof
