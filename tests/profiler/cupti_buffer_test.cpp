// The bounded CUPTI buffer pool.
#include <gtest/gtest.h>

#include <cstdint>

#include "profiler/cupti_buffer_pool.h"

namespace tcprof {
namespace {

TEST(CuptiBufferPool, HandsOutAlignedBuffersUpToItsBound) {
  CuptiBufferPool pool(1000, 2);
  uint8_t* a = pool.acquire();
  uint8_t* b = pool.acquire();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 8, 0u);
  EXPECT_EQ(pool.acquire(), nullptr);  // CUPTI drops (and counts) records instead
  EXPECT_EQ(pool.refusals(), 1u);
  pool.release(a);
  EXPECT_EQ(pool.acquire(), a);  // reused, not reallocated
  EXPECT_EQ(pool.buffer_bytes(), 1000u);
}

}  // namespace
}  // namespace tcprof
