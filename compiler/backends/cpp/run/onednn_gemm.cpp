#include "compiler/backends/cpp/run/onednn_gemm.h"

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <ATen/ATen.h>

#include "compiler/backends/cpp/run/onednn_convolution.h"

#ifdef TCPROF_HAVE_ONEDNN
#include "compiler/backends/cpp/run/onednn_support.h"
#endif

namespace tcprof {

bool onednn_gemm_available() { return onednn_layout_enabled(); }

#ifdef TCPROF_HAVE_ONEDNN

namespace {

using dnnl::memory;
using dt = memory::data_type;

// Everything a primitive is made for: the operands' sizes and strides, and whether a bias is added.
using GemmKey = std::vector<int64_t>;

// A primitive, the memory descriptors it was made for, and its key.
struct GemmPrimitive {
  dnnl::matmul matmul;
  memory::desc src, weights, dst, bias;
  GemmKey key;
};

struct GemmPrimitives {
  std::mutex mu;
  std::map<GemmKey, std::shared_ptr<const GemmPrimitive>> by_key;  // null: oneDNN refused it
};

GemmPrimitives& primitives() {
  static GemmPrimitives* p = new GemmPrimitives();  // never destroyed: used until the process exits
  return *p;
}

memory::dims dims_of(c10::IntArrayRef v) { return memory::dims(v.begin(), v.end()); }

// A size-1 dimension's stride is arbitrary in LibTorch; oneDNN checks it, so it gets the stride
// a dense layout would give it.
memory::dims strides_of(const at::Tensor& t) {
  memory::dims s = dims_of(t.strides());
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    if (t.size(d) == 1) s[static_cast<size_t>(d)] = d + 1 < t.dim() ? s[static_cast<size_t>(d + 1)] * t.size(d + 1) : 1;
  }
  return s;
}

std::shared_ptr<const GemmPrimitive> primitive_for(const at::Tensor& a, const at::Tensor& b, bool bias) {
  const memory::dims a_strides = strides_of(a), b_strides = strides_of(b);
  GemmKey key = dims_of(a.sizes());
  key.push_back(b.size(-1));
  key.insert(key.end(), a_strides.begin(), a_strides.end());
  key.insert(key.end(), b_strides.begin(), b_strides.end());
  key.push_back(bias ? 1 : 0);
  GemmPrimitives& p = primitives();
  std::lock_guard<std::mutex> lock(p.mu);
  auto it = p.by_key.find(key);
  if (it != p.by_key.end()) return it->second;
  std::shared_ptr<const GemmPrimitive> made;
  try {
    std::vector<int64_t> out_sizes = a.sizes().vec();
    out_sizes.back() = b.size(-1);
    memory::desc src(dims_of(a.sizes()), dt::f32, a_strides), weights(dims_of(b.sizes()), dt::f32, b_strides);
    memory::desc dst(dims_of(out_sizes), dt::f32, dims_of(c10::contiguous_strides(out_sizes)));
    const int64_t n = b.size(-1);
    memory::desc bias_md = bias ? memory::desc({1, n}, dt::f32, memory::dims{n, 1}) : memory::desc();
#if DNNL_VERSION_MAJOR >= 3
    dnnl::matmul::primitive_desc pd(onednn_cpu_engine(), src, weights, bias_md, dst);
#else
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, bias_md, dst), onednn_cpu_engine());
#endif
    made = std::make_shared<const GemmPrimitive>(GemmPrimitive{dnnl::matmul(pd), src, weights, dst, bias_md, key});
  } catch (const dnnl::error&) {
  }
  return p.by_key.emplace(std::move(key), made).first->second;
}

// A primitive that failed to execute is not tried again: its operands go to LibTorch from then on.
void refuse(const GemmKey& key) {
  GemmPrimitives& p = primitives();
  std::lock_guard<std::mutex> lock(p.mu);
  p.by_key[key] = nullptr;
}

bool usable(const at::Tensor& t, int64_t dim) {
  return t.defined() && t.dim() == dim && t.scalar_type() == at::kFloat && t.device().is_cpu() && t.layout() == at::kStrided;
}

}  // namespace

std::optional<at::Tensor> onednn_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor* bias) {
  const int64_t dim = a.dim();
  if (!onednn_gemm_available() || dim < 2 || dim > 6 || !usable(a, dim) || !usable(b, dim) || a.size(-1) != b.size(-2) ||
      a.sizes().slice(0, dim - 2) != b.sizes().slice(0, dim - 2) || (dim > 2 && bias != nullptr) || a.numel() == 0 ||
      b.numel() == 0) {
    return std::nullopt;
  }
  for (const at::Tensor* t : {&a, &b}) {
    for (int64_t d = 0; d < dim; ++d) {
      if (t->stride(d) < 0 || (t->stride(d) == 0 && t->size(d) > 1)) return std::nullopt;
    }
  }
  at::Tensor bias_c;
  if (bias != nullptr) {
    if (!usable(*bias, 1) || bias->size(0) != b.size(-1)) return std::nullopt;
    bias_c = bias->contiguous();
  }
  std::shared_ptr<const GemmPrimitive> mm = primitive_for(a, b, bias != nullptr);
  if (!mm) return std::nullopt;
  std::vector<int64_t> out_sizes = a.sizes().vec();
  out_sizes.back() = b.size(-1);
  at::Tensor y = at::empty(out_sizes, a.options().memory_format(at::MemoryFormat::Contiguous));
  try {
    dnnl::engine& eng = onednn_cpu_engine();
    memory src(mm->src, eng, a.data_ptr()), weights(mm->weights, eng, b.data_ptr()), dst(mm->dst, eng, y.data_ptr());
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (bias != nullptr) args.emplace(DNNL_ARG_BIAS, memory(mm->bias, eng, bias_c.data_ptr()));
    static thread_local dnnl::stream stream(eng);
    mm->matmul.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error&) {
    refuse(mm->key);  // as OnednnLinear: LibTorch's op computes it, now and from then on
    return std::nullopt;
  }
  return y;
}

#else  // built without oneDNN's headers

std::optional<at::Tensor> onednn_gemm(const at::Tensor&, const at::Tensor&, const at::Tensor*) { return std::nullopt; }

#endif

void warm_onednn_gemm() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!onednn_gemm_available()) return;
    const at::Tensor a = at::ones({8, 8});
    (void)onednn_gemm(a, a, nullptr);
  });
}

}  // namespace tcprof
