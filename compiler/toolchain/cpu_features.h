// Which vector ISA the running CPU supports, and the compiler flags that target it. Generated
// kernels are compiled for the machine they run on; the flags are part of the cache key, so a cache
// shared between different machines never hands one CPU code built for another.
#pragma once
#include <string>
#include <vector>

namespace tcprof {

// "avx512" (F+BW+VL+DQ), "avx2" (AVX2+FMA), or "generic" (anything else, including non-x86).
std::string cpu_isa();

// Vector width the compiler should prefer on this CPU: 512 on AVX-512 CPUs except the Skylake-SP
// family (Skylake-X, Cascade Lake, Cooper Lake), whose clock drops under 512-bit code; else 256.
int preferred_vector_bits();

// Compiler flags for an ISA name returned by cpu_isa(); empty for "generic". `vector_bits` only
// matters for "avx512".
std::vector<std::string> isa_flags(const std::string& isa, int vector_bits = 256);

// isa_flags(cpu_isa(), preferred_vector_bits()).
std::vector<std::string> cpu_flags();

}  // namespace tcprof
