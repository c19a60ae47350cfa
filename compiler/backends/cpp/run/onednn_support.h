// What the files that use oneDNN share (onednn_convolution.cpp, onednn_channel_ops.cpp,
// onednn_linear.cpp, onednn_gemm.cpp; only they include this header, and only when tcprof is built with oneDNN's):
// one CPU engine, the post-op call whose signature oneDNN 3 changed, and the layouts of chain values.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <oneapi/dnnl/dnnl.hpp>

namespace tcprof {

inline dnnl::engine& onednn_cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

inline void append_eltwise(dnnl::post_ops& ops, dnnl::algorithm algorithm, float alpha, float beta) {
#if DNNL_VERSION_MAJOR >= 3
  ops.append_eltwise(algorithm, alpha, beta);
#else
  ops.append_eltwise(1.f, algorithm, alpha, beta);
#endif
}


// The layout of a chain value (BlockedValue::layout): oneDNN's memory descriptor of its buffer.
struct BlockedLayout {
  dnnl::memory::desc md;
};

// oneDNN's name of a layout, "aBcd16b" (dims by decreasing stride, blocked ones capital, then the
// inner blocks), shown as PyTorch's names: nchw, nhwc, nChw16c.
inline std::string format_of(const dnnl::memory::desc& md) {
  using Dims = dnnl::memory::dims;
#if DNNL_VERSION_MAJOR >= 3
  if (md.get_format_kind() != dnnl::memory::format_kind::blocked) return "opaque";
  const int ndims = md.get_ndims();
  Dims strides = md.get_strides(), blks = md.get_inner_blks(), idxs = md.get_inner_idxs();
  const int nblks = md.get_inner_nblks();
#else
  if (md.data.format_kind != dnnl_blocked) return "opaque";
  const int ndims = md.data.ndims;
  const auto& b = md.data.format_desc.blocking;
  Dims strides(b.strides, b.strides + ndims), blks(b.inner_blks, b.inner_blks + b.inner_nblks),
      idxs(b.inner_idxs, b.inner_idxs + b.inner_nblks);
  const int nblks = b.inner_nblks;
#endif
  std::vector<int> order(static_cast<size_t>(ndims));
  for (int d = 0; d < ndims; ++d) order[static_cast<size_t>(d)] = d;
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return strides[static_cast<size_t>(x)] > strides[static_cast<size_t>(y)]; });
  std::string tag;
  for (int d : order) {
    bool blocked = false;
    for (int k = 0; k < nblks; ++k) blocked = blocked || idxs[static_cast<size_t>(k)] == d;
    tag += static_cast<char>((blocked ? 'A' : 'a') + d);
  }
  for (int k = 0; k < nblks; ++k) tag += std::to_string(blks[static_cast<size_t>(k)]) + static_cast<char>('a' + idxs[static_cast<size_t>(k)]);
  if (tag == "abcd") return "nchw";
  if (tag == "acdb") return "nhwc";
  if (nblks == 1 && tag.compare(0, 4, "aBcd") == 0 && tag.back() == 'b') return "nChw" + tag.substr(4, tag.size() - 5) + "c";
  return tag;
}

// B of an "nChwBc" layout name, or 0.
inline int64_t channel_block_of(const std::string& format) {
  if (format.size() <= 5 || format.compare(0, 4, "nChw") != 0 || format.back() != 'c') return 0;
  const std::string digits = format.substr(4, format.size() - 5);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoll(digits);
}

inline at::Tensor buffer_for(const dnnl::memory::desc& md) {
  return at::empty({static_cast<int64_t>(md.get_size())}, at::TensorOptions().dtype(at::kByte));
}

// A buffer in layout `md` as a tensor over its memory, without a copy: [n, c, h, w] for nchw and
// nhwc (strided), [n, c/B, h, w, B] for nChwBc (channels padded up to a multiple of B, padding
// zero); undefined for any other layout. `block` is B, or 0 for the 4-D views.
struct ChannelView {
  at::Tensor values;
  int64_t block = 0;
};
inline ChannelView channel_view(const dnnl::memory::desc& md, void* ptr, int64_t n, int64_t c, int64_t h, int64_t w) {
  const std::string f = format_of(md);
  const auto opts = at::TensorOptions().dtype(at::kFloat);
  if (f == "nchw") return {at::from_blob(ptr, {n, c, h, w}, opts), 0};
  if (f == "nhwc") return {at::from_blob(ptr, {n, c, h, w}, {h * w * c, 1, w * c, c}, opts), 0};
  if (const int64_t block = channel_block_of(f); block > 0) {
    const int64_t blocks = (c + block - 1) / block;
    if (static_cast<int64_t>(md.get_size()) != n * blocks * h * w * block * 4) return {};
    return {at::from_blob(ptr, {n, blocks, h, w, block}, opts), block};
  }
  return {};
}

}  // namespace tcprof
