#include "compiler/backends/cpp/run/onednn_linear.h"

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>

#include <ATen/ATen.h>

#include "compiler/backends/cpp/run/linear_gemm.h"

#ifdef TCPROF_HAVE_ONEDNN
#include "compiler/backends/cpp/run/onednn_support.h"
#endif

namespace tcprof {

#ifdef TCPROF_HAVE_ONEDNN

namespace {

using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

dnnl::primitive_attr attr_for(OnednnLinear::Activation a) {
  dnnl::primitive_attr attr;
  if (a == OnednnLinear::Activation::None) return attr;
  const dnnl::algorithm alg =
      a == OnednnLinear::Activation::Gelu ? dnnl::algorithm::eltwise_gelu_erf : dnnl::algorithm::eltwise_gelu_tanh;
  dnnl::post_ops ops;
  append_eltwise(ops, alg, 0.f, 0.f);
  attr.set_post_ops(ops);
  return attr;
}

dnnl::matmul::primitive_desc matmul_pd(int64_t rows, int64_t k, int64_t n, const memory::desc& weights, bool bias,
                                       OnednnLinear::Activation activation) {
  memory::desc src({rows, k}, dt::f32, tag::ab), dst({rows, n}, dt::f32, tag::ab);
  memory::desc b = bias ? memory::desc({1, n}, dt::f32, tag::ab) : memory::desc();
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul::primitive_desc(onednn_cpu_engine(), src, weights, b, dst, attr_for(activation));
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, b, dst), attr_for(activation), onednn_cpu_engine());
#endif
}

}  // namespace

struct OnednnLinear::Impl {
  int64_t k = 0, n = 0;
  Activation activation = Activation::None;
  at::Tensor weight, bias;  // the originals: LibTorch's linear for a row count oneDNN cannot take
  memory::desc packed_md;
  memory packed;
  std::unique_ptr<memory> bias_mem;
  mutable std::mutex mu;
  mutable std::map<int64_t, std::unique_ptr<dnnl::matmul>> by_rows;  // null: no primitive, LibTorch
  mutable dnnl::stream stream{onednn_cpu_engine()};
  mutable std::atomic<bool> failed{false};  // an execute failed: LibTorch's linear from then on

  const dnnl::matmul* primitive(int64_t rows) const {
    std::lock_guard<std::mutex> lock(mu);
    auto it = by_rows.find(rows);
    if (it != by_rows.end()) return it->second.get();
    std::unique_ptr<dnnl::matmul> made;
    try {
      auto pd = matmul_pd(rows, k, n, packed_md, bias.defined(), activation);
      made = std::make_unique<dnnl::matmul>(pd);
    } catch (const dnnl::error&) {
    }
    return by_rows.emplace(rows, std::move(made)).first->second.get();
  }
};

OnednnLinear::OnednnLinear(const at::Tensor& w, const at::Tensor* bias, int64_t rows, Activation activation)
    : impl_(std::make_unique<Impl>()) {
  if (w.dim() != 2 || w.scalar_type() != at::kFloat || !w.device().is_cpu() || rows < 1) {
    throw std::runtime_error("OnednnLinear: a 2-D CPU float weight and at least one row");
  }
  Impl& m = *impl_;
  m.n = w.size(0), m.k = w.size(1);
  m.weight = w;
  m.activation = activation;
  if (bias != nullptr) m.bias = bias->contiguous();
  try {
    auto pd = matmul_pd(rows, m.k, m.n, memory::desc({m.k, m.n}, dt::f32, tag::any), m.bias.defined(), activation);
    m.packed_md = pd.weights_desc();
    m.packed = memory(m.packed_md, onednn_cpu_engine());
    // The [N, K] weight is the [K, N] operand with strides (1, K): oneDNN's "ba".
    at::Tensor plain = w.contiguous();
    memory from({{m.k, m.n}, dt::f32, tag::ba}, onednn_cpu_engine(), plain.data_ptr());
    dnnl::reorder(from, m.packed).execute(m.stream, from, m.packed);
    m.stream.wait();
    if (m.bias.defined()) m.bias_mem = std::make_unique<memory>(memory::desc({1, m.n}, dt::f32, tag::ab), onednn_cpu_engine(), m.bias.data_ptr());
    m.by_rows.emplace(rows, std::make_unique<dnnl::matmul>(pd));
  } catch (const dnnl::error& e) {
    throw std::runtime_error(std::string("oneDNN matmul: ") + e.what());
  }
}

OnednnLinear::~OnednnLinear() = default;

at::Tensor OnednnLinear::operator()(const at::Tensor& x) const {
  const Impl& m = *impl_;
  std::vector<int64_t> out_sizes = x.sizes().vec();
  out_sizes.back() = m.n;
  const int64_t rows = m.k == 0 ? 0 : x.numel() / m.k;
  const dnnl::matmul* mm = rows > 0 && !m.failed ? m.primitive(rows) : nullptr;
  auto through_libtorch = [&] {
    at::Tensor y = at::linear(x, m.weight, m.bias.defined() ? m.bias : at::Tensor()).contiguous();
    apply_activation(y, m.activation);
    return y;
  };
  if (mm == nullptr) return through_libtorch();
  at::Tensor src = x.reshape({rows, m.k}).contiguous();
  at::Tensor y = at::empty(out_sizes, x.options());
  memory src_mem({{rows, m.k}, dt::f32, tag::ab}, onednn_cpu_engine(), src.data_ptr());
  memory dst_mem({{rows, m.n}, dt::f32, tag::ab}, onednn_cpu_engine(), y.data_ptr());
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, m.packed}, {DNNL_ARG_DST, dst_mem}};
  if (m.bias_mem) args.emplace(DNNL_ARG_BIAS, *m.bias_mem);
  try {
    mm->execute(m.stream, args);
    m.stream.wait();
  } catch (const dnnl::error&) {
    // Seen on an AVX2 EPYC with PyPI's LibTorch in the process: Debian's oneDNN 2.6 answered
    // "could not execute a primitive" from the matmul (its AVX2 path, not the AVX-512 kernels),
    // as the convolution's execute did with LibTorch 2.11 (onednn_convolution.cpp). The weight is
    // LibTorch's as it was: the same linear through LibTorch, now and from then on.
    m.failed = true;
    return through_libtorch();
  }
  return y;
}

#else  // built without oneDNN's headers: PreparedLinear never gets one

struct OnednnLinear::Impl {};
OnednnLinear::OnednnLinear(const at::Tensor&, const at::Tensor*, int64_t, Activation) {
  throw std::runtime_error("tcprof was built without oneDNN");
}
OnednnLinear::~OnednnLinear() = default;
at::Tensor OnednnLinear::operator()(const at::Tensor&) const { throw std::runtime_error("tcprof was built without oneDNN"); }

#endif

}  // namespace tcprof
