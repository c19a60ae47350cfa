#include "compiler/optim/cuda_fused_optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "compiler/backends/cuda/codegen_cuda.h"
#include "compiler/backends/cuda/cuda_driver.h"
#include "compiler/backends/cuda/cuda_emulation.h"
#include "compiler/optim/optimizer_update.h"
#include "compiler/toolchain/cubin_cache.h"
#include "compiler/toolchain/kernel_library.h"
#include "compiler/toolchain/nvrtc_compiler.h"
#include "compiler/torch_compat.h"
#include "core/error.h"

namespace tcprof {
namespace {

constexpr int64_t kChunk = 16384;  // elements a block takes at a time (TC_OPTIM_CHUNK)
constexpr unsigned kBlock = 256;
constexpr unsigned kMaxGrid = 65535;  // blocks loop over the rest (grid-stride)
constexpr int kEntryWords = 8;  // tc_optim_entry

// The table entry of one parameter and the launch's argument, as the kernel reads them: every
// member is 8 bytes, so host and device agree on the layout. Per entry: p, g, m, v, n,
// first_chunk, a, b (doubles: adam's -step size and sqrt of the second bias correction; sgd's
// first-step flag in a).
constexpr const char* kKernels = R"CUDA(
#define TC_OPTIM_CHUNK 16384

struct tc_optim_entry {
  float* p;
  const float* g;
  float* m;
  float* v;
  int64_t n, first_chunk;
  double a, b;
};
static_assert(sizeof(tc_optim_entry) == 64, "eight 8-byte members");

struct tc_optim_params {
  const tc_optim_entry* table;  // the parameters with a gradient, in order
  int64_t count, chunks;
  double lr, beta1, beta2, eps, weight_decay, momentum, decoupled;
};

// The parameter that chunk `c` belongs to: the last entry whose first chunk is at most c.
__device__ __forceinline__ tc_optim_entry tc_optim_find(const tc_optim_params& q, int64_t c) {
  int64_t lo = 0, hi = q.count - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (q.table[mid].first_chunk <= c) lo = mid; else hi = mid - 1;
  }
  return q.table[lo];
}

extern "C" __global__ void __launch_bounds__(256) tcprof_cuda_adam_step(const tc_optim_params q) {
  tc_adam_scalars k;
  k.b1 = (float)q.beta1, k.b2 = (float)q.beta2, k.eps = (float)q.eps, k.wd = (float)q.weight_decay;
  k.one_minus_b1 = (float)(1 - q.beta1), k.one_minus_b2 = (float)(1 - q.beta2);
  k.decoupled = q.decoupled != 0, k.decay = q.weight_decay != 0 && !k.decoupled;
  k.keep = (float)(1 - q.lr * q.weight_decay);
  for (int64_t c = blockIdx.x; c < q.chunks; c += gridDim.x) {
    const tc_optim_entry t = tc_optim_find(q, c);
    const int64_t begin = (c - t.first_chunk) * TC_OPTIM_CHUNK;
    const int64_t end = begin + TC_OPTIM_CHUNK < t.n ? begin + TC_OPTIM_CHUNK : t.n;
    const float neg_step = (float)t.a, sqrt_bias2 = (float)t.b;
    int64_t rest = begin;  // where the element-wise loop starts
    if (tc_aligned4(t.p) && tc_aligned4(t.g) && tc_aligned4(t.m) && tc_aligned4(t.v)) {
      const int64_t first = begin / 4, vectors = (end - begin) / 4;  // begin is a multiple of 4
      for (int64_t i = threadIdx.x; i < vectors; i += blockDim.x) {
        tc_vec4<float> p = tc_load4(t.p, first + i), m = tc_load4(t.m, first + i), v = tc_load4(t.v, first + i);
        const tc_vec4<float> g = tc_load4(t.g, first + i);
        TC_UNROLL
        for (int e = 0; e < 4; ++e) tc_adam_update(p.v[e], g.v[e], m.v[e], v.v[e], k, neg_step, sqrt_bias2);
        tc_store4(t.p, first + i, p);
        tc_store4(t.m, first + i, m);
        tc_store4(t.v, first + i, v);
      }
      rest = begin + 4 * vectors;
    }
    for (int64_t j = rest + threadIdx.x; j < end; j += blockDim.x) {
      tc_adam_update(t.p[j], t.g[j], t.m[j], t.v[j], k, neg_step, sqrt_bias2);
    }
  }
}

// m: the momentum buffer (null without momentum); a != 0: the parameter's first step.
extern "C" __global__ void __launch_bounds__(256) tcprof_cuda_sgd_step(const tc_optim_params q) {
  const float neg_lr = (float)(-q.lr), wd = (float)q.weight_decay, momentum = (float)q.momentum;
  const bool decay = q.weight_decay != 0, use_momentum = q.momentum != 0;
  for (int64_t c = blockIdx.x; c < q.chunks; c += gridDim.x) {
    const tc_optim_entry t = tc_optim_find(q, c);
    const int64_t begin = (c - t.first_chunk) * TC_OPTIM_CHUNK;
    const int64_t end = begin + TC_OPTIM_CHUNK < t.n ? begin + TC_OPTIM_CHUNK : t.n;
    const bool first_step = t.a != 0;
    int64_t rest = begin;
    if (tc_aligned4(t.p) && tc_aligned4(t.g) && (!use_momentum || tc_aligned4(t.m))) {
      const int64_t first = begin / 4, vectors = (end - begin) / 4;
      for (int64_t i = threadIdx.x; i < vectors; i += blockDim.x) {
        tc_vec4<float> p = tc_load4(t.p, first + i), b = {};
        const tc_vec4<float> g = tc_load4(t.g, first + i);
        if (use_momentum) b = tc_load4(t.m, first + i);
        TC_UNROLL
        for (int e = 0; e < 4; ++e) tc_sgd_update(p.v[e], g.v[e], b.v[e], neg_lr, wd, momentum, decay, use_momentum, first_step);
        tc_store4(t.p, first + i, p);
        if (use_momentum) tc_store4(t.m, first + i, b);
      }
      rest = begin + 4 * vectors;
    }
    for (int64_t j = rest + threadIdx.x; j < end; j += blockDim.x) {
      float b = use_momentum ? t.m[j] : 0.0f;
      tc_sgd_update(t.p[j], t.g[j], b, neg_lr, wd, momentum, decay, use_momentum, first_step);
      if (use_momentum) t.m[j] = b;
    }
  }
}
)CUDA";

uint64_t bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}
uint64_t address(const void* p) { return reinterpret_cast<uint64_t>(p); }

// LibTorch's current stream on `device` (its kernels go there, so ours stay ordered with them).
void* current_stream(const c10::Device& device) {
  void* stream = nullptr;
  if (!compat::current_native_stream(device, &stream)) {
    throw Error(ErrorKind::Input, "tcprof's CUDA optimizer step: this LibTorch does not give the current stream's handle");
  }
  return stream;
}

}  // namespace

// The kernel as it runs here: a loaded CUBIN on the parameters' GPU, or the emulation's library.
struct CudaFusedOptimizer::Kernel {
  using EmulateFn = void (*)(const void*, unsigned, unsigned);
  std::shared_ptr<CudaModule> module;
  CudaFunction function = nullptr;
  std::shared_ptr<LoadedLibrary> library;
  EmulateFn emulate = nullptr;
};

const std::string& CudaFusedOptimizer::source() {
  static const std::string unit =
      std::string(cuda_prelude()) + "\n#define TC_OPTIM_FN __device__ __forceinline__\n" + optimizer_update_source() + kKernels;
  return unit;
}

std::string CudaFusedOptimizer::unsupported_reason(const std::vector<at::Tensor>& params) {
  if (params.empty()) return "there are no parameters";
  const c10::Device device = params.front().device();
  for (const auto& p : params) {
    if (p.device() != device) return fmt::format("parameters are on {} and {}", device.str(), p.device().str());
    if (p.scalar_type() != at::kFloat) return fmt::format("a parameter is {}", c10::toString(p.scalar_type()));
    if (!p.is_contiguous()) return "a parameter is not contiguous";
  }
  if (!device.is_cuda() && !device.is_cpu()) return fmt::format("parameters are on {}", device.str());
  return shared_parameter_memory(params);
}

CudaFusedOptimizer::CudaFusedOptimizer(std::vector<at::Tensor> params, FusedOptimizerOptions options)
    : params_(std::move(params)), options_(std::move(options)), kernel_(std::make_unique<Kernel>()) {
  check_fused_optimizer_kind(options_.kind);
  std::string why = unsupported_reason(params_);
  if (!why.empty()) throw Error(ErrorKind::Usage, "tcprof's CUDA optimizer step cannot run: " + why);
  const bool adam = options_.kind != "sgd";
  param_steps_.assign(params_.size(), 0);
  for (const auto& p : params_) {
    if (adam || options_.momentum != 0) state1_.push_back(at::zeros_like(p));
    if (adam) state2_.push_back(at::zeros_like(p));
  }
  const char* symbol = adam ? "tcprof_cuda_adam_step" : "tcprof_cuda_sgd_step";
  const c10::Device device = params_.front().device();
  if (device.is_cuda()) {
    const std::string arch = CudaDriver::shared().arch(device.index());
    CachedCubin cubin = cached_cubin(NvrtcCompiler::shared(), source(), arch, KernelLibraryBuilder::shared().cache_dir());
    kernel_->module = CudaDriver::shared().load(cubin.cubin, device.index());
    kernel_->function = kernel_->module->function(symbol);
    current_stream(device);  // a LibTorch that cannot name its stream refuses here, not at the first step
    target_ = arch;
    built_ = fmt::format("CUBIN for {} (NVRTC {}, {})", arch, NvrtcCompiler::shared().version(),
                         cubin.cache_hit ? "kernel cache hit" : fmt::format("compiled in {:.2f} s", cubin.compile_s));
  } else {
    CudaUnit unit;
    unit.source = source();
    for (const char* s : {"tcprof_cuda_adam_step", "tcprof_cuda_sgd_step"}) {
      CudaKernelSymbol k;
      k.symbol = s;
      unit.kernels.push_back(k);
    }
    kernel_->library = cuda_emulation_compiler().compile(emulation_source(unit)).library;
    kernel_->emulate = reinterpret_cast<Kernel::EmulateFn>(kernel_->library->symbol(std::string(symbol) + "_emulate"));
    target_ = "emulated";
    built_ = "run on the CPU in emulation";
  }
}

CudaFusedOptimizer::~CudaFusedOptimizer() = default;

std::string CudaFusedOptimizer::describe() const {
  return describe_optimizer_step(options_, params_, fmt::format(" on {} (tcprof's CUDA kernel, {})", params_.front().device().str(), target_));
}

void CudaFusedOptimizer::zero_grad() {
  for (auto& p : params_) p.mutable_grad().reset();
}

void CudaFusedOptimizer::step() {
  const bool adam = options_.kind != "sgd";
  std::vector<uint64_t> table;
  int64_t chunks = 0;
  // Every gradient is checked before any step count moves: a refused step changes nothing.
  for (size_t i = 0; i < params_.size(); ++i) {
    const at::Tensor& grad = params_[i].grad();
    if (!grad.defined()) continue;
    TORCH_CHECK(grad.scalar_type() == at::kFloat && grad.device() == params_[i].device() && grad.sizes() == params_[i].sizes(),
                "tcprof's CUDA optimizer step: parameter ", i, "'s gradient is ", grad.toString(), " ", grad.sizes(), " on ",
                grad.device(), ", the parameter ", params_[i].sizes());
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    const at::Tensor& grad = params_[i].grad();
    if (!grad.defined()) continue;  // as torch::optim: no gradient, no step (and no step count)
    if (!grad.is_contiguous()) params_[i].mutable_grad() = grad.contiguous();
    const int64_t t = ++param_steps_[i];
    const int64_t n = params_[i].numel();
    if (n == 0) continue;
    double a = 0, b = 0;
    if (adam) {
      a = -options_.lr / (1 - std::pow(options_.beta1, static_cast<double>(t)));
      b = std::sqrt(1 - std::pow(options_.beta2, static_cast<double>(t)));
    } else {
      a = t == 1 ? 1 : 0;
    }
    table.insert(table.end(), {address(params_[i].data_ptr<float>()), address(params_[i].grad().data_ptr<float>()),
                               address(state1_.empty() ? nullptr : state1_[i].data_ptr<float>()),
                               address(state2_.empty() ? nullptr : state2_[i].data_ptr<float>()),
                               static_cast<uint64_t>(n), static_cast<uint64_t>(chunks), bits(a), bits(b)});
    chunks += (n + kChunk - 1) / kChunk;
  }
  if (chunks == 0) return;
  const int64_t count = static_cast<int64_t>(table.size()) / kEntryWords;
  std::vector<uint64_t> params = {0,
                                  static_cast<uint64_t>(count),
                                  static_cast<uint64_t>(chunks),
                                  bits(options_.lr),
                                  bits(options_.beta1),
                                  bits(options_.beta2),
                                  bits(options_.eps),
                                  bits(options_.weight_decay),
                                  bits(options_.momentum),
                                  bits(options_.kind == "adamw" ? 1.0 : 0.0)};
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(chunks, kMaxGrid));
  ++launches_;
  if (kernel_->emulate) {
    params[0] = address(table.data());
    kernel_->emulate(params.data(), grid, kBlock);
    return;
  }
  // The table through pinned memory on the current stream: LibTorch's host allocator keeps the
  // pinned block until the copy is done, and the device block returns to its stream's pool only
  // behind this launch.
  const c10::Device device = params_.front().device();
  const int64_t bytes = static_cast<int64_t>(table.size() * sizeof(uint64_t));
  at::Tensor host = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).pinned_memory(true));
  std::memcpy(host.data_ptr(), table.data(), static_cast<size_t>(bytes));
  at::Tensor on_device = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(device));
  on_device.copy_(host, /*non_blocking=*/true);
  params[0] = address(on_device.data_ptr());
  kernel_->module->launch(kernel_->function, grid, kBlock, params.data(), current_stream(device));
}

}  // namespace tcprof
