// FIPS 180-4 SHA-256, written from the specification.
#include "core/sha256.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <fmt/format.h>

#include "core/error.h"

namespace tcprof {
namespace {

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

using CompressFn = void (*)(uint32_t* h, const unsigned char* blocks, size_t count);

// The specification's compression function, one 64-byte block after another.
void compress_portable(uint32_t* hv, const unsigned char* p, size_t count) {
  for (; count > 0; --count, p += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      w[i] = (uint32_t{p[4 * i]} << 24) | (uint32_t{p[4 * i + 1]} << 16) | (uint32_t{p[4 * i + 2]} << 8) |
             uint32_t{p[4 * i + 3]};
    }
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = hv[0], b = hv[1], c = hv[2], d = hv[3], e = hv[4], f = hv[5], g = hv[6], h = hv[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
      uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    hv[0] += a; hv[1] += b; hv[2] += c; hv[3] += d;
    hv[4] += e; hv[5] += f; hv[6] += g; hv[7] += h;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// The x86 SHA extensions (Intel Goldmont and Ice Lake on, AMD Zen): about 4x the portable code.
// A model file is hashed on every run, and ViT-B's 346 MB took 1.0 s in the portable code.
// The state lives as two vectors, ABEF and CDGH, the order sha256rnds2 takes it in.
__attribute__((target("sha,sse4.1"))) void compress_sha_ni(uint32_t* hv, const unsigned char* p, size_t count) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hv));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hv + 4));
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; count > 0; --count, p += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[16];  // the schedule, four words a vector
    for (int i = 0; i < 16; ++i) {
      if (i < 4) {
        w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), byte_swap);
      } else {
        // W[t..t+3] = sigma1 terms (msg2) over W[t-16] + sigma0(W[t-15]) (msg1) + W[t-7..t-4].
        __m128i t = _mm_add_epi32(_mm_sha256msg1_epu32(w[i - 4], w[i - 3]), _mm_alignr_epi8(w[i - 1], w[i - 2], 4));
        w[i] = _mm_sha256msg2_epu32(t, w[i - 1]);
      }
      __m128i msg = _mm_add_epi32(w[i], _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRound + 4 * i)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(msg, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hv), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hv + 4), _mm_alignr_epi8(dchg, feba, 8));
}

bool cpu_has_sha_ni() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3)) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & bit_SHA) != 0;
}
#endif

CompressFn best_compress() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (cpu_has_sha_ni()) return compress_sha_ni;
#endif
  return compress_portable;
}

class Sha256 {
 public:
  explicit Sha256(CompressFn compress) : compress_(compress) {}

  void update(const unsigned char* data, size_t n) {
    total_ += n;
    if (used_ > 0) {
      size_t take = std::min(n, sizeof block_ - used_);
      std::memcpy(block_ + used_, data, take);
      used_ += take;
      data += take;
      n -= take;
      if (used_ < sizeof block_) return;
      compress_(h_.data(), block_, 1);
      used_ = 0;
    }
    compress_(h_.data(), data, n / 64);  // whole blocks straight from the caller's buffer
    std::memcpy(block_, data + n / 64 * 64, n % 64);
    used_ = n % 64;
  }

  std::string hex() {
    uint64_t bits = total_ * 8;
    unsigned char tail[128] = {0x80};
    size_t pad = (used_ < 56 ? 56 : 120) - used_;
    for (int i = 0; i < 8; ++i) tail[pad + i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    update(tail, pad + 8);
    std::string out;
    for (uint32_t v : h_) out += fmt::format("{:08x}", v);
    return out;
  }

 private:
  CompressFn compress_;
  std::array<uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char block_[64] = {};
  size_t used_ = 0;
  uint64_t total_ = 0;
};

const CompressFn kCompress = best_compress();

}  // namespace

std::string sha256_hex(const std::string& data) {
  Sha256 s(kCompress);
  s.update(reinterpret_cast<const unsigned char*>(data.data()), data.size());
  return s.hex();
}

std::string sha256_hex_portable(const std::string& data) {
  Sha256 s(compress_portable);
  s.update(reinterpret_cast<const unsigned char*>(data.data()), data.size());
  return s.hex();
}

bool sha256_uses_cpu_instructions() { return kCompress != compress_portable; }

std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Input, fmt::format("cannot read '{}'", path));
  Sha256 s(kCompress);
  std::vector<char> buf(1 << 20);  // 1 MiB reads: the hash, not the stream, sets the pace
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    s.update(reinterpret_cast<const unsigned char*>(buf.data()), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw Error(ErrorKind::Input, fmt::format("cannot read '{}': a read failed part way", path));
  return s.hex();
}

}  // namespace tcprof
