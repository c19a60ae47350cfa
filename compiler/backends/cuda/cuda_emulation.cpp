#include "compiler/backends/cuda/cuda_emulation.h"

#include <set>

#include <fmt/format.h>

namespace tcprof {

const char* cuda_emulation_header() {
  return R"EMU(#define TC_EMULATION 1
#include <condition_variable>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>
#include <mutex>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
// Blocks run one at a time, so one static array is every block's shared memory in turn.
#define __shared__ static

struct tc_dim3 { unsigned x = 0, y = 1, z = 1; };
static thread_local tc_dim3 threadIdx, blockIdx;
static tc_dim3 blockDim, gridDim;

namespace tc_emu {
// A reusable barrier for the block's threads (C++17 has no std::barrier).
class Barrier {
 public:
  explicit Barrier(unsigned n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    unsigned gen = gen_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen != gen_; });
    }
  }
 private:
  std::mutex m_;
  std::condition_variable cv_;
  unsigned n_, waiting_ = 0, gen_ = 0;
};
static Barrier* barrier = nullptr;
static uint64_t* lanes = nullptr;  // one 8-byte slot per thread, for shuffles
}  // namespace tc_emu

inline void __syncthreads() { tc_emu::barrier->wait(); }

// Every thread of the block calls the shuffle together in the generated kernels (a reduction's
// butterfly), so a block-wide exchange through memory gives each lane its partner's value.
template <typename T>
inline T __shfl_xor_sync(unsigned, T v, int lane_mask) {
  static_assert(sizeof(T) <= 8, "8-byte lanes");
  std::memcpy(&tc_emu::lanes[threadIdx.x], &v, sizeof v);
  tc_emu::barrier->wait();
  T r;
  std::memcpy(&r, &tc_emu::lanes[threadIdx.x ^ static_cast<unsigned>(lane_mask)], sizeof r);
  tc_emu::barrier->wait();
  return r;
}

inline float __int_as_float(int32_t bits) { float f; std::memcpy(&f, &bits, sizeof f); return f; }
inline double __longlong_as_double(long long bits) { double d; std::memcpy(&d, &bits, sizeof d); return d; }

namespace tc_emu {
template <typename P>
void launch(void (*kernel)(P), const void* params, unsigned grid, unsigned block) {
  P p;
  std::memcpy(&p, params, sizeof p);
  gridDim.x = grid;
  blockDim.x = block;
  Barrier bar(block);
  std::vector<uint64_t> slots(block);
  barrier = &bar;
  lanes = slots.data();
  std::vector<std::thread> threads;
  threads.reserve(block);
  for (unsigned t = 0; t < block; ++t) {
    threads.emplace_back([&, t] {
      threadIdx.x = t;
      for (unsigned b = 0; b < grid; ++b) {
        blockIdx.x = b;
        kernel(p);
        bar.wait();  // the next block reuses the shared memory
      }
    });
  }
  for (auto& th : threads) th.join();
}
}  // namespace tc_emu

)EMU";
}

std::string emulation_source(const CudaUnit& unit) {
  std::string s = cuda_emulation_header();
  s += unit.source;
  std::set<std::string> done;
  for (const auto& k : unit.kernels) {
    if (!done.insert(k.symbol).second) continue;
    s += fmt::format("extern \"C\" void {0}_emulate(const void* params, unsigned grid, unsigned block) {{\n"
                     "  tc_emu::launch({0}, params, grid, block);\n}}\n",
                     k.symbol);
  }
  return s;
}

}  // namespace tcprof
