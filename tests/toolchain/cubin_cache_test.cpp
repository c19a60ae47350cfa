// The CUBIN cache against the real NVRTC (skipped where the CUDA toolkit is absent): a second
// compile of the same source and architecture is a hit, another architecture is another entry, a
// damaged CUBIN is rebuilt and said, and a folder others can write is refused.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "compiler/toolchain/cubin_cache.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::TempDir;

const char* kSource = "extern \"C\" __global__ void scale(float* x, float a, int n) {\n"
                      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                      "  if (i < n) x[i] *= a;\n}\n";

class CubinCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!NvrtcCompiler::available(&why)) GTEST_SKIP() << why;
  }
};

TEST_F(CubinCacheTest, ASecondCompileIsAHitAndAnotherArchitectureIsAnotherEntry) {
  TempDir dir;
  const NvrtcCompiler& nvrtc = NvrtcCompiler::shared();
  CachedCubin first = cached_cubin(nvrtc, kSource, "sm_90", dir.path().string());
  EXPECT_FALSE(first.cache_hit);
  ASSERT_GT(first.cubin.size(), 64u);
  EXPECT_EQ(first.cubin.compare(0, 4, "\x7f" "ELF"), 0);
  CachedCubin second = cached_cubin(nvrtc, kSource, "sm_90", dir.path().string());
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.cubin, first.cubin);
  CachedCubin other = cached_cubin(nvrtc, kSource, "sm_80", dir.path().string());
  EXPECT_FALSE(other.cache_hit);
  EXPECT_NE(other.key, first.key);
  // The source is kept beside the CUBIN for people reading a kernel.
  EXPECT_TRUE(std::filesystem::exists(dir.path().string() + "/cubins/" + first.key.substr(0, 2) + "/" + first.key + ".cu"));
}

TEST_F(CubinCacheTest, ADamagedCubinIsRebuiltNotHandedToTheDriver) {
  TempDir dir;
  const NvrtcCompiler& nvrtc = NvrtcCompiler::shared();
  CachedCubin first = cached_cubin(nvrtc, kSource, "sm_90", dir.path().string());
  const std::string path = dir.path().string() + "/cubins/" + first.key.substr(0, 2) + "/" + first.key + ".cubin";
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(first.cubin.size() / 2));
    f.write("\0\0\0\0\0\0\0\0", 8);  // same size, other bytes: only the hash can tell
  }
  CachedCubin again = cached_cubin(nvrtc, kSource, "sm_90", dir.path().string());
  EXPECT_FALSE(again.cache_hit);
  EXPECT_EQ(again.cubin, first.cubin);
  EXPECT_TRUE(cached_cubin(nvrtc, kSource, "sm_90", dir.path().string()).cache_hit);
}

TEST_F(CubinCacheTest, AFolderOthersCanWriteIsRefused) {
  TempDir dir;
  std::filesystem::create_directories(dir.path().string() + "/cubins");
  ASSERT_EQ(::chmod((dir.path().string() + "/cubins").c_str(), 0777), 0);
  try {
    cached_cubin(NvrtcCompiler::shared(), kSource, "sm_90", dir.path().string());
    FAIL() << "expected the cache folder to be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("writable by every user"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tcprof
