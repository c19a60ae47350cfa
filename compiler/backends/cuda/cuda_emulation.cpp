#include "compiler/backends/cuda/cuda_emulation.h"

#include <set>

#include <fmt/format.h>

namespace tcprof {

const char* cuda_emulation_header() {
  return R"EMU(#define TC_EMULATION 1
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <memory>
#include <ucontext.h>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
// Blocks run one at a time, so one static array is every block's shared memory in turn.
#define __shared__ static

struct tc_dim3 { unsigned x = 0, y = 1, z = 1; };
static tc_dim3 threadIdx, blockIdx, blockDim, gridDim;

// A block's threads are fibers on the calling thread, run in turn: each runs until it reaches a
// barrier (or its end), then the next one runs. Every thread meets the same barriers (the
// generated kernels' barriers are in uniform control flow), so when thread 0 resumes after a
// barrier, every other thread has reached it.
namespace tc_emu {
struct Block {
  std::vector<ucontext_t> fibers;
  ucontext_t caller;
  unsigned current = 0;
};
static Block* block = nullptr;
static uint64_t* lanes = nullptr;  // one 8-byte slot per thread, for shuffles
static void (*body)(const void*) = nullptr;
static const void* body_params = nullptr;

inline void switch_to(unsigned next) {
  const unsigned me = block->current;
  block->current = next;
  threadIdx.x = next;
  swapcontext(&block->fibers[me], &block->fibers[next]);
  threadIdx.x = me;  // resumed
}

inline void fiber_main() {
  body(body_params);
  const unsigned me = block->current;
  if (me + 1 == blockDim.x) {
    setcontext(&block->caller);  // the block is done
  }
  block->current = me + 1;
  threadIdx.x = me + 1;
  setcontext(&block->fibers[me + 1]);
}
}  // namespace tc_emu

inline void __syncthreads() { tc_emu::switch_to((tc_emu::block->current + 1) % blockDim.x); }

// Every thread of the block calls the shuffle together in the generated kernels (a reduction's
// butterfly), so an exchange through memory between two barriers gives each lane its partner's.
template <typename T>
inline T __shfl_xor_sync(unsigned, T v, int lane_mask) {
  static_assert(sizeof(T) <= 8, "8-byte lanes");
  std::memcpy(&tc_emu::lanes[threadIdx.x], &v, sizeof v);
  __syncthreads();
  T r;
  std::memcpy(&r, &tc_emu::lanes[threadIdx.x ^ static_cast<unsigned>(lane_mask)], sizeof r);
  __syncthreads();
  return r;
}

inline float __int_as_float(int32_t bits) { float f; std::memcpy(&f, &bits, sizeof f); return f; }
inline float __uint_as_float(uint32_t bits) { float f; std::memcpy(&f, &bits, sizeof f); return f; }
inline uint32_t __float_as_uint(float f) { uint32_t u; std::memcpy(&u, &f, sizeof u); return u; }
inline double __longlong_as_double(long long bits) { double d; std::memcpy(&d, &bits, sizeof d); return d; }

namespace tc_emu {
template <typename P>
void launch(void (*kernel)(P), const void* params, unsigned grid, unsigned threads) {
  P p;
  std::memcpy(&p, params, sizeof p);
  static void (*k)(P) = nullptr;
  k = kernel;
  body = [](const void* q) { k(*static_cast<const P*>(q)); };
  body_params = &p;
  gridDim.x = grid;
  blockDim.x = threads;
  constexpr size_t kStack = 64 * 1024;
  // Not zeroed: a fiber touches the top of its stack only, and a 1,024-thread block would
  // otherwise clear 64 MiB a launch.
  std::unique_ptr<char[]> stacks(new char[kStack * threads]);
  std::vector<uint64_t> slots(threads);
  lanes = slots.data();
  Block b;
  b.fibers.resize(threads);
  block = &b;
  for (unsigned g = 0; g < grid; ++g) {
    blockIdx.x = g;
    for (unsigned t = 0; t < threads; ++t) {
      getcontext(&b.fibers[t]);
      b.fibers[t].uc_stack.ss_sp = stacks.get() + t * kStack;
      b.fibers[t].uc_stack.ss_size = kStack;
      b.fibers[t].uc_link = nullptr;
      makecontext(&b.fibers[t], fiber_main, 0);
    }
    b.current = 0;
    threadIdx.x = 0;
    swapcontext(&b.caller, &b.fibers[0]);
  }
  block = nullptr;
}
}  // namespace tc_emu

)EMU";
}

std::string emulation_source(const CudaUnit& unit) {
  std::string s = cuda_emulation_header();
  s += unit.source;
  std::set<std::string> done;
  for (const auto& k : unit.kernels) {
    for (const std::string& symbol : {k.symbol, k.finish_symbol}) {
      if (symbol.empty() || !done.insert(symbol).second) continue;
      s += fmt::format("extern \"C\" void {0}_emulate(const void* params, unsigned grid, unsigned block) {{\n"
                       "  tc_emu::launch({0}, params, grid, block);\n}}\n",
                       symbol);
    }
  }
  return s;
}

KernelLibraryBuilder& cuda_emulation_compiler() {
  static KernelLibraryBuilder builder([] {
    KernelLibraryOptions o;
    o.openmp = false;
    return o;
  }());
  return builder;
}

}  // namespace tcprof
