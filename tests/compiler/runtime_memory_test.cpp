// Memory of a compiled call: the cpp runtime drops each value after the last step that uses it,
// so a call's peak is the live set, as in LibTorch's interpreter, and not every value of the graph
// (which also made every call fault in fresh pages). Measured with a counting CPU allocator put in
// front of LibTorch's for the duration of one call.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>

#include <c10/core/CPUAllocator.h>

#include "compiler/torch_compat.h"
#include "tests/compiler/compiler_test_support.h"

namespace tcprof {
namespace {

using testing::inputs_for;
using testing::sample;

// Counts bytes allocated through LibTorch's CPU allocator while installed, and their peak. The
// context stays the data pointer (raw_allocate asserts it); sizes and the base deleter are kept
// beside it.
class CountingAllocator : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {}
  c10::DataPtr allocate(size_t n) TCPROF_ALLOCATE_CONST override {
    c10::DataPtr inner = base_->allocate(n);
    void* data = inner.get();
    c10::DeleterFnPtr deleter = inner.get_deleter();
    if (inner.get_context() != data || !inner.release_context()) return inner;  // not counted
    {
      std::lock_guard<std::mutex> lock(mutex());
      blocks()[data] = {n, deleter};
    }
    int64_t now = live_ += static_cast<int64_t>(n);
    int64_t seen = peak_.load();
    while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
    }
    return {data, data, &release, c10::Device(c10::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  // Pure virtual from LibTorch 2.3 on; a plain member before.
  void copy_data(void* dest, const void* src, std::size_t count) const {
    std::copy_n(static_cast<const char*>(src), count, static_cast<char*>(dest));
  }
  void reset_peak() { peak_ = live_.load(); }
  int64_t peak_above(int64_t start) const { return peak_.load() - start; }
  int64_t live() const { return live_.load(); }

 private:
  struct Block {
    size_t bytes;
    c10::DeleterFnPtr deleter;
  };
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::unordered_map<void*, Block>& blocks() {
    static std::unordered_map<void*, Block> b;
    return b;
  }
  static void release(void* data) {
    Block b{};
    {
      std::lock_guard<std::mutex> lock(mutex());
      auto it = blocks().find(data);
      if (it == blocks().end()) return;
      b = it->second;
      blocks().erase(it);
    }
    live_ -= static_cast<int64_t>(b.bytes);
    if (b.deleter) b.deleter(data);
  }
  c10::Allocator* base_;
  static std::atomic<int64_t> live_, peak_;
};
std::atomic<int64_t> CountingAllocator::live_{0};
std::atomic<int64_t> CountingAllocator::peak_{0};

// Peak bytes allocated above the start while `fn` runs.
template <typename Fn>
int64_t peak_bytes_of(Fn fn) {
  c10::Allocator* base = c10::GetCPUAllocator();
  static CountingAllocator* counting = new CountingAllocator(base);  // outlives every tensor it made
  c10::SetCPUAllocator(counting, /*priority=*/100);
  counting->reset_peak();
  int64_t start = counting->live();
  fn();
  int64_t peak = counting->peak_above(start);
  c10::SetCPUAllocator(base, /*priority=*/100);
  return peak;
}

TEST(CppRuntime, ACallsPeakMemoryIsItsLiveSetNotEveryValue) {
  at::NoGradGuard no_grad;
  CompileOptions options;
  options.backend = "cpp";
  options.strict = true;
  CompiledModule m(load_model(sample("gpt")), options, nullptr);
  // Batch 16 x 128 tokens: 8 MB attention scores and MLP activations per block, 4 blocks.
  auto in = inputs_for({"i64[16,128](0,512)"});
  m.call(in);  // compiles
  int64_t compiled = peak_bytes_of([&] { m.call(in); });
  int64_t eager = peak_bytes_of([&] { m.call_eager(in); });
  ASSERT_GT(eager, 8 << 20);
  // Holding every value to the end of the graph peaked at several times eager's.
  EXPECT_LT(compiled, eager * 3 / 2) << "compiled peak " << compiled << " bytes, eager " << eager;
}

// The first call captures (every value of the graph kept for the compile) and compiles from the
// capture's values instead of running the graph once more: its peak is one set of values, not two,
// and none of them outlives the compile.
TEST(CppRuntime, TheCompileReusesTheCaptureRunsValuesAndReleasesThem) {
  at::NoGradGuard no_grad;
  CompileOptions options;
  options.backend = "cpp";
  options.strict = true;
  auto in = inputs_for({"i64[16,128](0,512)"});
  LoadedModel model = load_model(sample("gpt"));
  std::unique_ptr<CompiledModule> m;
  int64_t first = peak_bytes_of([&] {
    m = std::make_unique<CompiledModule>(model, options, nullptr);
    m->call(in);
  });
  int64_t eager = peak_bytes_of([&] { m->call_eager(in); });
  for (const auto& frame : m->frames()) {
    for (const auto& entry : frame->entries) EXPECT_EQ(entry->graph.capture_values, nullptr);
  }
  int64_t second = peak_bytes_of([&] { m->call(in); });
  EXPECT_LT(second, eager * 3 / 2);
  // Every value of the GPT at this batch is 12x an eager call's peak (304 MB); with a second run
  // of the graph for the compile, the first call peaked at 24x (609 MB).
  EXPECT_LT(first, eager * 16) << "first call peak " << first << " bytes, eager call " << eager;
}

}  // namespace
}  // namespace tcprof
