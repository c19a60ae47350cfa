#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/toolchain/cpu_features.h"
#include "compiler/toolchain/kernel_library.h"

namespace tcprof {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(CpuFeatures, IsaIsOneOfTheThreeNames) {
  std::string isa = cpu_isa();
  EXPECT_TRUE(isa == "avx512" || isa == "avx2" || isa == "generic") << isa;
  EXPECT_EQ(cpu_isa(), isa);  // stable
}

TEST(CpuFeatures, FlagsMatchTheIsa) {
  EXPECT_TRUE(isa_flags("generic").empty());
  auto avx2 = isa_flags("avx2");
  EXPECT_TRUE(has(avx2, "-mavx2") && has(avx2, "-mfma"));
  auto avx512 = isa_flags("avx512");
  for (const char* f : {"-mavx2", "-mfma", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq"}) {
    EXPECT_TRUE(has(avx512, f)) << f;
  }
  EXPECT_TRUE(has(avx512, "-mprefer-vector-width=256"));
  EXPECT_TRUE(has(isa_flags("avx512", 512), "-mprefer-vector-width=512"));
}

TEST(CpuFeatures, PreferredVectorWidthFitsTheIsa) {
  int bits = preferred_vector_bits();
  if (cpu_isa() == "avx512") {
    EXPECT_TRUE(bits == 256 || bits == 512) << bits;
  } else {
    EXPECT_LE(bits, 256);
  }
}

// The running CPU's flags are what the compiler uses, so kernels can use every vector unit here.
TEST(CpuFeatures, CompilerUsesTheRunningCpusFlags) {
  KernelLibraryOptions options;
  options.cache_dir = "/nonexistent-unused";
  KernelLibraryBuilder compiler(options);
  for (const auto& f : cpu_flags()) EXPECT_TRUE(has(compiler.flags(), f)) << f;
}

}  // namespace
}  // namespace tcprof
