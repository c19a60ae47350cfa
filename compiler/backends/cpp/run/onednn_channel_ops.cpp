#include "compiler/backends/cpp/run/onednn_channel_ops.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#ifdef TCPROF_HAVE_ONEDNN
#include "compiler/backends/cpp/run/onednn_support.h"
#endif

namespace tcprof {

namespace {

// B of an "nChwBc" layout with a oneDNN format tag (4, 8 or 16), else 0.
int64_t tagged_block(const std::string& format) {
  for (int64_t b : {4, 8, 16}) {
    if (format == "nChw" + std::to_string(b) + "c") return b;
  }
  return 0;
}

}  // namespace

std::string channel_op_format(const ChainChannelOp& op, const std::vector<std::string>& input_formats) {
  if (input_formats.empty()) return "nchw";
  const std::string& f = input_formats.front();
  for (const std::string& g : input_formats) {
    if (g != f) return "nchw";
  }
  if (f == "nchw" || f == "nhwc") return f;
  const int64_t block = tagged_block(f);
  if (block == 0) return "nchw";
  if (op.kind == ChainChannelOp::Kind::Cat) {
    // Every input but the last fills whole blocks; the last one's padding is the output's.
    for (size_t i = 0; i + 1 < op.input_channels.size(); ++i) {
      if (op.input_channels[i] % block != 0) return "nchw";
    }
  }
  return f;
}

#ifdef TCPROF_HAVE_ONEDNN

namespace {

using dnnl::memory;

memory::format_tag tag_of(const std::string& format) {
  if (format == "nhwc") return memory::format_tag::nhwc;
  if (format == "nChw16c") return memory::format_tag::nChw16c;
  if (format == "nChw8c") return memory::format_tag::nChw8c;
  if (format == "nChw4c") return memory::format_tag::nChw4c;
  return memory::format_tag::nchw;
}

memory::dims dims_of(const memory::desc& md) {
#if DNNL_VERSION_MAJOR >= 3
  return md.get_dims();
#else
  return md.dims();
#endif
}

// A view's values as an NCHW contiguous tensor of `c` channels (the padding of a blocked one left
// out) that owns its memory. The view is over a chain buffer (at::from_blob, not owning it): where
// the values are already laid out as NCHW's (a 1x1 image in nhwc, one block of channels)
// .contiguous() hands back that view, which read freed memory once the buffer went (a max pool to
// 1x1 after a convolution returned garbage).
at::Tensor to_nchw(const ChannelView& v, int64_t c) {
  at::Tensor r;
  if (v.block == 0) {
    r = v.values.contiguous();
  } else {
    const auto s = v.values.sizes();
    r = v.values.permute({0, 1, 4, 2, 3}).reshape({s[0], s[1] * s[4], s[2], s[3]}).narrow(1, 0, c).contiguous();
  }
  return r.is_alias_of(v.values) ? r.clone() : r;
}

at::Tensor max_pool(const ChainChannelOp& op, const at::Tensor& x) {
  return at::max_pool2d(x, {op.kh, op.kw}, {op.sh, op.sw}, {op.ph, op.pw}, {op.dh, op.dw}, op.ceil_mode);
}

// Max pooling of images whose channels are innermost (nhwc; or each block of nChwBc as an image of
// B channels), output rows [begin, end) (a row: one image's output line). Eager's rule per
// element: a value replaces the maximum when it is greater or NaN, windows in the same order, so
// NaN spreads and ties keep the first. The inner loop over channels vectorises; compiled for
// AVX-512 and AVX2 beside the baseline and picked at load time, as LibTorch's own kernels are
// (its channels-last max pool also writes indices: 0.85 ms against 0.26 on SqueezeNet's first pool).
struct PoolShape {
  int64_t h, w, c, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
};
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define TCPROF_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TCPROF_CPU_CLONES
#endif
TCPROF_CPU_CLONES void max_pool_rows(const float* __restrict in, float* __restrict out, int64_t begin, int64_t end,
                                     const PoolShape& s) {
  for (int64_t r = begin; r < end; ++r) {
    const int64_t image = r / s.oh, y = r % s.oh;
    for (int64_t x = 0; x < s.ow; ++x) {
      float* __restrict o = out + (r * s.ow + x) * s.c;
      for (int64_t k = 0; k < s.c; ++k) o[k] = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < s.kh; ++i) {
        const int64_t iy = y * s.sh - s.ph + i * s.dh;
        if (iy < 0 || iy >= s.h) continue;
        for (int64_t j = 0; j < s.kw; ++j) {
          const int64_t ix = x * s.sw - s.pw + j * s.dw;
          if (ix < 0 || ix >= s.w) continue;
          const float* __restrict v = in + ((image * s.h + iy) * s.w + ix) * s.c;
          for (int64_t k = 0; k < s.c; ++k) o[k] = (v[k] > o[k] || v[k] != v[k]) ? v[k] : o[k];
        }
      }
    }
  }
}

void max_pool_channels_inner(const ChainChannelOp& op, const float* in, float* out, int64_t images, int64_t channels) {
  const PoolShape s{op.h, op.w, channels, op.oh, op.ow, op.kh, op.kw, op.sh, op.sw, op.ph, op.pw, op.dh, op.dw};
  const int64_t rows = images * op.oh;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, op.ow * channels * op.kh * op.kw));
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) { max_pool_rows(in, out, begin, end, s); });
}

// Input i in NCHW: a dense input as it is, a blocked one through its view (or oneDNN's reorder for
// a layout without one).
at::Tensor nchw_input(const ChainChannelOp& op, size_t i, const BlockedValue* b, const at::Tensor* d) {
  if (!b) return *d;
  const int64_t c = op.input_channels[i];
  ChannelView v = channel_view(b->layout->md, b->buffer.data_ptr(), op.n, c, op.h, op.w);
  if (v.values.defined()) return to_nchw(v, c);
  at::Tensor plain = at::empty({op.n, c, op.h, op.w}, at::TensorOptions().dtype(at::kFloat));
  memory::desc to({op.n, c, op.h, op.w}, memory::data_type::f32, memory::format_tag::nchw);
  dnnl::stream stream(onednn_cpu_engine());
  memory from_mem(b->layout->md, onednn_cpu_engine(), b->buffer.data_ptr()), to_mem(to, onednn_cpu_engine(), plain.data_ptr());
  dnnl::reorder(from_mem, to_mem).execute(stream, from_mem, to_mem);
  stream.wait();
  return plain;
}

// `t`'s memory as a chain value's byte buffer, shared (its storage counts both).
at::Tensor bytes_of(const at::Tensor& t) { return t.view({-1}).view(at::kByte); }

}  // namespace

bool run_channel_op(const ChainChannelOp& op, const std::vector<const BlockedValue*>& blocked_inputs,
                    const std::vector<const at::Tensor*>& dense_inputs, BlockedValue* blocked, at::Tensor* dense) {
  const size_t count = op.input_slots.size();
  if (blocked_inputs.size() != count || dense_inputs.size() != count) return false;
  std::vector<const BlockedValue*> held(count, nullptr);
  std::vector<std::string> formats;
  for (size_t i = 0; i < count; ++i) {
    const BlockedValue* b = blocked_inputs[i];
    const at::Tensor* d = dense_inputs[i];
    const int64_t c = op.input_channels[i];
    if (b && b->buffer.defined() && b->layout) {
      if (dims_of(b->layout->md) != memory::dims{op.n, c, op.h, op.w}) {
        throw std::runtime_error("oneDNN chain: a channel op's blocked input has another shape than compiled");
      }
      held[i] = b;
      formats.push_back(format_of(b->layout->md));
    } else if (d && d->defined() && d->scalar_type() == at::kFloat && d->device().is_cpu() && d->dim() == 4 &&
               d->is_contiguous() && d->sizes() == at::IntArrayRef{op.n, c, op.h, op.w}) {
      formats.push_back("nchw");
    } else {
      return false;
    }
  }
  const std::string format = channel_op_format(op, formats);
  if (format == "nchw") {
    // Every input through NCHW, the op as LibTorch's; the result is both forms at once.
    std::vector<at::Tensor> inputs;
    for (size_t i = 0; i < count; ++i) inputs.push_back(nchw_input(op, i, held[i], dense_inputs[i]));
    at::Tensor r = op.kind == ChainChannelOp::Kind::Cat ? at::cat(inputs, 1) : max_pool(op, inputs.front()).contiguous();
    if (blocked) {
      memory::desc md({op.n, op.c, op.oh, op.ow}, memory::data_type::f32, memory::format_tag::nchw);
      *blocked = {bytes_of(r), std::make_shared<const BlockedLayout>(BlockedLayout{md})};
    }
    if (dense) *dense = r;
    return true;
  }
  // In the inputs' own layout, on views of their buffers.
  const memory::desc md({op.n, op.c, op.oh, op.ow}, memory::data_type::f32, tag_of(format));
  std::vector<ChannelView> in;
  for (size_t i = 0; i < count; ++i) {
    in.push_back(channel_view(held[i]->layout->md, held[i]->buffer.data_ptr(), op.n, op.input_channels[i], op.h, op.w));
    if (!in.back().values.defined()) throw std::runtime_error("oneDNN chain: no view of a channel op's input");
  }
  at::Tensor out;
  if (op.kind == ChainChannelOp::Kind::Cat) {
    out = buffer_for(md);
    ChannelView o = channel_view(md, out.data_ptr(), op.n, op.c, op.oh, op.ow);
    int64_t at_index = 0;  // channels, or blocks
    for (const ChannelView& v : in) {
      o.values.narrow(1, at_index, v.values.size(1)).copy_(v.values);
      at_index += v.values.size(1);
    }
  } else {
    const ChannelView& x = in.front();
    out = buffer_for(md);
    const float* from = static_cast<const float*>(held[0]->buffer.data_ptr());
    float* to = static_cast<float*>(out.data_ptr());
    if (x.block) {
      max_pool_channels_inner(op, from, to, op.n * x.values.size(1), x.block);  // padded channels stay 0
    } else if (format == "nhwc") {
      max_pool_channels_inner(op, from, to, op.n, op.c);
    } else {  // nchw: LibTorch's own kernel
      channel_view(md, out.data_ptr(), op.n, op.c, op.oh, op.ow).values.copy_(max_pool(op, x.values));
    }
  }
  if (dense) *dense = to_nchw(channel_view(md, out.data_ptr(), op.n, op.c, op.oh, op.ow), op.c);
  if (blocked) *blocked = {std::move(out), std::make_shared<const BlockedLayout>(BlockedLayout{md})};
  return true;
}

#else  // built without oneDNN's headers: the layout pass plans nothing, so nothing runs these

bool run_channel_op(const ChainChannelOp&, const std::vector<const BlockedValue*>&, const std::vector<const at::Tensor*>&,
                    BlockedValue*, at::Tensor*) {
  return false;
}

#endif

}  // namespace tcprof
