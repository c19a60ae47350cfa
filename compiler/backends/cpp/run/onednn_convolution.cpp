#include "compiler/backends/cpp/run/onednn_convolution.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <unordered_map>

#include <ATen/ATen.h>

#ifdef TCPROF_HAVE_ONEDNN
#include "compiler/backends/cpp/run/onednn_support.h"
#endif

namespace tcprof {

const char* chain_format_name(ChainFormat f) {
  switch (f) {
    case ChainFormat::Any: return "oneDNN's choice";
    case ChainFormat::Blocked16: return "nChw16c";
    case ChainFormat::Blocked8: return "nChw8c";
    case ChainFormat::Blocked16Winograd: return "nChw16c+winograd";
  }
  return "?";
}

std::string onednn_version() {
#ifdef TCPROF_HAVE_ONEDNN
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
#else
  return "";
#endif
}

bool onednn_layout_enabled() {
#ifdef TCPROF_HAVE_ONEDNN
  static const bool enabled = [] {
    const char* v = std::getenv("TCPROF_ONEDNN");
    return v == nullptr || std::string(v) != "0";
  }();
  return enabled;
#else
  return false;
#endif
}

#ifdef TCPROF_HAVE_ONEDNN

namespace {

using dnnl::memory;
using Dims = memory::dims;

dnnl::algorithm eltwise_of(OnednnConv::Activation a) {
  switch (a) {
    case OnednnConv::Activation::Relu: return dnnl::algorithm::eltwise_relu;
    case OnednnConv::Activation::Clip: return dnnl::algorithm::eltwise_clip;
    case OnednnConv::Activation::Hardswish: return dnnl::algorithm::eltwise_hardswish;
    case OnednnConv::Activation::Silu: return dnnl::algorithm::eltwise_swish;
    case OnednnConv::Activation::Sigmoid: return dnnl::algorithm::eltwise_logistic;
    case OnednnConv::Activation::Tanh: return dnnl::algorithm::eltwise_tanh;
    case OnednnConv::Activation::Gelu: return dnnl::algorithm::eltwise_gelu_erf;
    case OnednnConv::Activation::None: break;
  }
  throw std::runtime_error("no oneDNN eltwise for this activation");
}

// alpha/beta as each algorithm reads them (oneDNN 3 made hardswish's 1/6 and 1/2 explicit; 2.x
// ignores them).
std::pair<float, float> eltwise_params(const OnednnConv& c) {
  switch (c.activation) {
    case OnednnConv::Activation::Clip: return {c.alpha, c.beta};
    case OnednnConv::Activation::Hardswish: return {1.f / 6.f, 0.5f};
    case OnednnConv::Activation::Silu: return {1.f, 0.f};
    default: return {0.f, 0.f};
  }
}

// oneDNN's relu and clip return 0 (or the lower bound) for NaN, where LibTorch's return NaN: those
// two run after the primitive as LibTorch's own clamp over the output buffer, so a NaN in the
// model's input still reaches its output as in eager. The other activations propagate NaN in
// oneDNN as in LibTorch and stay post-ops. Measured: the separate clamp costs 2-3% of MobileNetV2
// and ResNet18 against fusing relu/clip as post-ops.
bool clamps_after(const OnednnConv& c) {
  return c.activation == OnednnConv::Activation::Relu || c.activation == OnednnConv::Activation::Clip;
}

// oneDNN's reference code ("ref:any", or "gemm:ref" over its reference GEMM): what oneDNN runs where
// it has no kernel for the CPU and layout. It is orders of magnitude slower than LibTorch's
// convolution, and its reference logistic maps NaN to 0 (LibTorch's sigmoid keeps NaN), so a chain
// never runs it.
bool is_reference(const dnnl::convolution_forward::primitive_desc& pd) {
  return std::string(pd.impl_info_str()).find("ref") != std::string::npos;
}

// Winograd only for outputs of 14x14 or more (see the constructor).
constexpr int64_t kMinWinogradOutput = 14 * 14;

// Values Winograd computes as the direct algorithm does, up to rounding: finite and far from
// overflow (its transforms add and scale up to 36 of them). One vectorised pass (aminmax keeps NaN).
bool within_winograd_range(const at::Tensor& values) {
  if (values.numel() == 0) return true;
  auto [lo, hi] = at::aminmax(values);
  const float l = lo.item<float>(), h = hi.item<float>();
  return l > -1e30f && h < 1e30f;  // false for NaN
}

// A per-channel [n, c, 1, 1] value shaped to broadcast over `view` (zero on padded channels).
at::Tensor per_channel(const ChannelView& view, const at::Tensor& value, int64_t n, int64_t c) {
  if (view.block == 0) return value.reshape({n, c, 1, 1});
  const int64_t blocks = view.values.size(1);
  at::Tensor padded = at::zeros({n, blocks * view.block}, value.options());
  padded.narrow(1, 0, c).copy_(value.reshape({n, c}));
  return padded.view({n, blocks, 1, 1, view.block});
}

// The mean over h and w of each channel, [n, c, 1, 1] contiguous.
at::Tensor channel_means(const ChannelView& view, int64_t n, int64_t c) {
  if (view.block == 0) return view.values.mean({2, 3}, /*keepdim=*/true).contiguous();
  return view.values.mean({2, 3}).reshape({n, -1}).narrow(1, 0, c).reshape({n, c, 1, 1}).contiguous();
}

// [n, c, h, w] floats in NCHW or channels-last memory.
at::Tensor dense_tensor(int64_t n, int64_t c, int64_t h, int64_t w, bool channels_last) {
  return at::empty({n, c, h, w}, at::TensorOptions().dtype(at::kFloat).memory_format(
                                     channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous));
}

}  // namespace

struct OnednnConvolution::Impl {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward primitive;
  memory::desc dense_src, dense_dst;  // NCHW
  std::shared_ptr<const BlockedLayout> output_layout;  // pd.dst_desc(), for the values it makes
  at::Tensor weight;                  // in pd.weights_desc()
  std::optional<at::Tensor> bias;
  bool failed = false;  // an execution failed: LibTorch runs this step from then on
  // Winograd: the direct algorithm on the same layouts, built on the first source Winograd must not
  // take, and what it is built from.
  bool winograd = false;
  std::function<dnnl::convolution_forward::primitive_desc(dnnl::algorithm)> make_pd;
  at::Tensor plain_weight;  // OIHW
  struct Direct {
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward primitive;
    at::Tensor weight;
  };
  std::unique_ptr<Direct> direct;
  memory::desc plain_weight_md;  // OIHW / GOIHW
  dnnl::stream stream{onednn_cpu_engine()};
  // Reorders by (from, to): built on first use, the same pair every call in practice.
  struct CachedReorder {
    memory::desc from, to;
    dnnl::reorder reorder;
  };
  std::vector<CachedReorder> reorders;

  void reorder(const memory::desc& from, void* src, const memory::desc& to, void* dst) {
    CachedReorder* r = nullptr;
    for (auto& c : reorders) {
      if (c.from == from && c.to == to) r = &c;
    }
    if (!r) {
      reorders.push_back({from, to, dnnl::reorder(dnnl::reorder::primitive_desc(onednn_cpu_engine(), from, onednn_cpu_engine(), to))});
      r = &reorders.back();
    }
    memory s(from, onednn_cpu_engine(), src), d(to, onednn_cpu_engine(), dst);
    r->reorder.execute(stream, s, d);
  }

  // The plain weight reordered into the layout `p` computes with.
  at::Tensor prepack_weight(const dnnl::convolution_forward::primitive_desc& p, const at::Tensor& w) {
    at::Tensor packed = buffer_for(p.weights_desc());
    memory from(plain_weight_md, onednn_cpu_engine(), w.data_ptr()), to(p.weights_desc(), onednn_cpu_engine(), packed.data_ptr());
    dnnl::reorder(dnnl::reorder::primitive_desc(onednn_cpu_engine(), plain_weight_md, onednn_cpu_engine(), p.weights_desc()))
        .execute(stream, from, to);
    stream.wait();
    return packed;
  }

  Direct& direct_fallback() {
    if (!direct) {
      auto d = std::make_unique<Direct>();
      d->pd = make_pd(dnnl::algorithm::convolution_direct);
      if (d->pd.src_desc() != pd.src_desc() || d->pd.dst_desc() != pd.dst_desc()) {
        throw std::runtime_error("oneDNN: the direct convolution chose other layouts than Winograd's");
      }
      d->primitive = dnnl::convolution_forward(d->pd);
      d->weight = prepack_weight(d->pd, plain_weight);
      direct = std::move(d);
    }
    return *direct;
  }
};

OnednnConvolution::OnednnConvolution(const OnednnConv& c, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                                     ChainFormat format)
    : conv_(c) {
  using tag = memory::format_tag;
  using dt = memory::data_type;
  Dims src{c.n, c.c, c.h, c.w}, dst{c.n, c.oc, c.oh, c.ow};
  Dims wdims = c.groups == 1 ? Dims{c.oc, c.c, c.kh, c.kw} : Dims{c.groups, c.oc / c.groups, c.c / c.groups, c.kh, c.kw};
  Dims strides{c.sh, c.sw}, dilates{c.dh - 1, c.dw - 1}, pad_l{c.ph, c.pw};
  // PyTorch pads both sides equally and floors the output size, as oneDNN does with equal pads.
  Dims pad_r = pad_l;
  auto layout_for = [&](int64_t channels) {
    if ((format == ChainFormat::Blocked16 || format == ChainFormat::Blocked16Winograd) && channels % 16 == 0) {
      return tag::nChw16c;
    }
    if (format == ChainFormat::Blocked8 && channels % 8 == 0) return tag::nChw8c;
    return tag::any;
  };
  memory::desc src_any(src, dt::f32, layout_for(c.c)), dst_any(dst, dt::f32, layout_for(c.oc)),
      w_any(wdims, dt::f32, tag::any);
  memory::desc b_md = bias ? memory::desc({c.oc}, dt::f32, tag::x) : memory::desc();
  dnnl::post_ops ops;
  if (c.residual_slot >= 0) ops.append_sum(c.residual_scale);
  if (c.activation != OnednnConv::Activation::None && !clamps_after(c)) {
    auto [alpha, beta] = eltwise_params(c);
    append_eltwise(ops, eltwise_of(c.activation), alpha, beta);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  auto prop = dnnl::prop_kind::forward_inference;
  impl_ = std::make_unique<Impl>();
  // The primitive for given activation layouts; the direct fallback of Winograd rebuilds with it.
  auto pd_maker = [=](const memory::desc& src_md, const memory::desc& dst_md) {
    return [=](dnnl::algorithm alg) {
#if DNNL_VERSION_MAJOR >= 3
      return dnnl::convolution_forward::primitive_desc(onednn_cpu_engine(), prop, alg, src_md, w_any, b_md, dst_md, strides,
                                                       dilates, pad_l, pad_r, attr);
#else
      dnnl::convolution_forward::desc d(prop, alg, src_md, w_any, b_md, dst_md, strides, dilates, pad_l, pad_r);
      return dnnl::convolution_forward::primitive_desc(d, attr, onednn_cpu_engine());
#endif
    };
  };
  impl_->make_pd = pd_maker(src_any, dst_any);
  at::Tensor w = weight.contiguous();
  impl_->plain_weight_md = memory::desc(wdims, dt::f32, c.groups == 1 ? tag::oihw : tag::goihw);
  try {
    // Winograd where it applies (the source layout is then nChw16c either way, so the direct
    // fallback reads the same buffers); the direct algorithm where this oneDNN has no Winograd.
    // Its weight transform runs at every start and costs ~20 ns per weight here (ResNet18's
    // 512-channel layers: 50 ms each), while the saving per call grows with the output's size: at
    // 7x7 outputs it saves 0.5 ms a call for 50 ms of start, so Winograd needs 14x14 or more.
    const bool wino = format == ChainFormat::Blocked16Winograd && c.kh == 3 && c.kw == 3 && c.sh == 1 && c.sw == 1 &&
                      c.dh == 1 && c.dw == 1 && c.groups == 1 && c.c % 16 == 0 && c.oc % 16 == 0 &&
                      c.oh * c.ow >= kMinWinogradOutput &&
                      within_winograd_range(w) && (!bias || within_winograd_range(*bias));
    if (wino) {
      try {
        impl_->pd = impl_->make_pd(dnnl::algorithm::convolution_winograd);
        impl_->winograd = true;
        impl_->plain_weight = w;
      } catch (const dnnl::error&) {
      }
    }
    if (!impl_->winograd) impl_->pd = impl_->make_pd(dnnl::algorithm::convolution_direct);
    if (is_reference(impl_->pd) && format != ChainFormat::Any) {
      // This CPU has no kernel of its own for the asked layout (nChw16c without AVX-512): the step
      // takes oneDNN's choice, and the chain reorders into and out of it.
      impl_->make_pd = pd_maker(memory::desc(src, dt::f32, tag::any), memory::desc(dst, dt::f32, tag::any));
      impl_->pd = impl_->make_pd(dnnl::algorithm::convolution_direct);
      impl_->winograd = false;
    }
    if (is_reference(impl_->pd)) {
      throw std::runtime_error("only oneDNN's reference convolution (" + std::string(impl_->pd.impl_info_str()) +
                               ") runs this step on this CPU");
    }
    impl_->primitive = dnnl::convolution_forward(impl_->pd);
    impl_->dense_src = memory::desc(src, dt::f32, c.input_channels_last ? tag::nhwc : tag::nchw);
    impl_->dense_dst = memory::desc(dst, dt::f32, c.output_channels_last ? tag::nhwc : tag::nchw);
    impl_->output_layout = std::make_shared<const BlockedLayout>(BlockedLayout{impl_->pd.dst_desc()});
    // The weight, once, into the layout the primitive computes with.
    impl_->weight = impl_->prepack_weight(impl_->pd, w);
    if (bias) impl_->bias = bias->contiguous();
  } catch (const dnnl::error& e) {
    throw std::runtime_error(std::string("oneDNN: ") + e.what());
  }
}

OnednnConvolution::~OnednnConvolution() = default;

std::string OnednnConvolution::input_format() const { return format_of(impl_->pd.src_desc()); }
std::string OnednnConvolution::output_format() const { return format_of(impl_->pd.dst_desc()); }
bool OnednnConvolution::winograd() const { return impl_->winograd; }

bool OnednnConvolution::run(const BlockedValue* input_blocked, const at::Tensor* input_dense, BlockedValue* residual_blocked,
                            const at::Tensor* residual_dense, bool residual_owned, BlockedValue* blocked, at::Tensor* dense,
                            const at::Tensor* scale, at::Tensor* pooled) {
  const OnednnConv& c = conv_;
  Impl& m = *impl_;
  // A dense operand in the memory format the plan took from eager (NCHW or channels-last).
  auto dense_fits = [](const at::Tensor* t, int64_t n, int64_t ch, int64_t h, int64_t w, bool channels_last) {
    return t && t->defined() && t->scalar_type() == at::kFloat && t->device().is_cpu() && t->dim() == 4 &&
           t->size(0) == n && t->size(1) == ch && t->size(2) == h && t->size(3) == w &&
           t->is_contiguous(channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous);
  };
  const bool in_blocked = input_blocked && input_blocked->buffer.defined() && input_blocked->layout;
  if (!in_blocked && !dense_fits(input_dense, c.n, c.c, c.h, c.w, c.input_channels_last)) return false;
  const bool res_blocked = residual_blocked && residual_blocked->buffer.defined() && residual_blocked->layout;
  if (c.residual_slot >= 0 && !res_blocked && !dense_fits(residual_dense, c.n, c.oc, c.oh, c.ow, c.output_channels_last)) {
    return false;
  }
  const bool operands_dense = !in_blocked && !res_blocked;
  if (m.failed && operands_dense) return false;
  if (scale && !(scale->defined() && scale->scalar_type() == at::kFloat && scale->device().is_cpu() && scale->dim() == 4 &&
                 scale->size(0) == c.n && scale->size(1) == c.c && scale->size(2) == 1 && scale->size(3) == 1)) {
    if (!operands_dense) throw std::runtime_error("oneDNN convolution: the input's per-channel scale has another shape");
    return false;
  }

  const memory::desc src_md = m.pd.src_desc(), dst_md = m.pd.dst_desc();
  // Source: used where it is when its layout is the one the primitive wants.
  at::Tensor src_tmp;
  void* src = nullptr;
  const memory::desc& from = in_blocked ? input_blocked->layout->md : m.dense_src;
  void* from_ptr = in_blocked ? input_blocked->buffer.data_ptr() : input_dense->data_ptr();
  if (from == src_md) {
    src = from_ptr;
  } else {
    src_tmp = buffer_for(src_md);
    src = src_tmp.data_ptr();
    m.reorder(from, from_ptr, src_md, src);
  }
  if (scale) {
    // x * s in the source's own layout, into a buffer of this step (x may have other readers).
    m.stream.wait();
    if (!src_tmp.defined()) src_tmp = buffer_for(src_md);
    ChannelView x = channel_view(src_md, src, c.n, c.c, c.h, c.w);
    ChannelView product = channel_view(src_md, src_tmp.data_ptr(), c.n, c.c, c.h, c.w);
    if (x.values.defined()) {
      at::mul_out(product.values, x.values, per_channel(x, *scale, c.n, c.c));
    } else {  // a layout without a view: through the input's dense form
      at::Tensor plain = dense_tensor(c.n, c.c, c.h, c.w, c.input_channels_last);
      m.reorder(src_md, src, m.dense_src, plain.data_ptr());
      m.stream.wait();
      plain.mul_(*scale);
      m.reorder(m.dense_src, plain.data_ptr(), src_md, src_tmp.data_ptr());
    }
    src = src_tmp.data_ptr();
  }
  // Destination: the residual first (sum post-op), written over when this step may.
  at::Tensor out;
  if (c.residual_slot >= 0) {
    const memory::desc& rfrom = res_blocked ? residual_blocked->layout->md : m.dense_dst;
    void* rptr = res_blocked ? residual_blocked->buffer.data_ptr() : residual_dense->data_ptr();
    // Only when nothing else shares the storage (a dense view of the same buffer, say).
    if (res_blocked && residual_owned && rfrom == dst_md && residual_blocked->buffer.storage().use_count() == 1) {
      out = std::move(residual_blocked->buffer);
    } else {
      out = buffer_for(dst_md);
      m.reorder(rfrom, rptr, dst_md, out.data_ptr());
    }
  } else {
    out = buffer_for(dst_md);
  }
  const dnnl::convolution_forward::primitive_desc* pd = &m.pd;
  const dnnl::convolution_forward* primitive = &m.primitive;
  const at::Tensor* weight = &m.weight;
  if (m.winograd) {
    m.stream.wait();  // the source's reorder has written it
    at::Tensor source = at::from_blob(src, {static_cast<int64_t>(src_md.get_size() / sizeof(float))}, at::kFloat);
    if (!within_winograd_range(source)) {
      Impl::Direct& d = m.direct_fallback();
      pd = &d.pd, primitive = &d.primitive, weight = &d.weight;
    }
  }
  memory src_mem(src_md, onednn_cpu_engine(), src), w_mem(pd->weights_desc(), onednn_cpu_engine(), weight->data_ptr()),
      dst_mem(dst_md, onednn_cpu_engine(), out.data_ptr());
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_DST, dst_mem}};
  if (m.bias) args.emplace(DNNL_ARG_BIAS, memory(pd->bias_desc(), onednn_cpu_engine(), m.bias->data_ptr()));
  try {
    primitive->execute(m.stream, args);
  } catch (const dnnl::error& e) {
    // Seen with PyPI's LibTorch 2.11 in the process: Debian's oneDNN 2.6 answered "unimplemented"
    // from a grouped convolution's execute (its gemm implementation) after LibTorch's own OpenMP
    // regions had run, having run it once before. With dense operands LibTorch computes the step
    // instead, now and from then on; a blocked operand exists only here, so that is an error.
    if (!operands_dense) throw std::runtime_error(std::string("oneDNN convolution failed: ") + e.what());
    m.failed = true;
    return false;
  }
  if (clamps_after(c)) {
    // Zero padding of a blocked layout stays zero (clamp keeps 0 for every bound we fuse).
    at::Tensor values = out.view(at::kFloat);
    if (c.activation == OnednnConv::Activation::Relu) at::clamp_min_(values, 0);
    else at::clamp_(values, c.alpha, c.beta);
  }
  if (dense) {
    if (dst_md == m.dense_dst) {
      *dense = c.output_channels_last ? out.view(at::kFloat).view({c.n, c.oh, c.ow, c.oc}).permute({0, 3, 1, 2})
                                      : out.view(at::kFloat).view({c.n, c.oc, c.oh, c.ow});
    } else {
      *dense = dense_tensor(c.n, c.oc, c.oh, c.ow, c.output_channels_last);
      m.reorder(dst_md, out.data_ptr(), m.dense_dst, dense->data_ptr());
    }
  }
  m.stream.wait();
  if (pooled) {
    ChannelView y = channel_view(dst_md, out.data_ptr(), c.n, c.oc, c.oh, c.ow);
    if (y.values.defined()) {
      *pooled = channel_means(y, c.n, c.oc);
    } else if (dense && dense->defined()) {
      *pooled = dense->mean({2, 3}, /*keepdim=*/true).contiguous();
    } else {  // a layout without a view: through the output's dense form
      at::Tensor plain = dense_tensor(c.n, c.oc, c.oh, c.ow, c.output_channels_last);
      m.reorder(dst_md, out.data_ptr(), m.dense_dst, plain.data_ptr());
      m.stream.wait();
      *pooled = plain.mean({2, 3}, /*keepdim=*/true).contiguous();
    }
  }
  if (blocked) *blocked = {std::move(out), m.output_layout};
  return true;
}

#else  // built without oneDNN's headers: the layout pass plans nothing, so nothing constructs these

struct OnednnConvolution::Impl {};
OnednnConvolution::OnednnConvolution(const OnednnConv& c, const at::Tensor&, const std::optional<at::Tensor>&, ChainFormat)
    : conv_(c) {
  throw std::runtime_error("tcprof was built without oneDNN");
}
OnednnConvolution::~OnednnConvolution() = default;
std::string OnednnConvolution::input_format() const { return ""; }
std::string OnednnConvolution::output_format() const { return ""; }
bool OnednnConvolution::winograd() const { return false; }
bool OnednnConvolution::run(const BlockedValue*, const at::Tensor*, BlockedValue*, const at::Tensor*, bool, BlockedValue*,
                            at::Tensor*, const at::Tensor*, at::Tensor*) {
  return false;
}

#endif

}  // namespace tcprof
