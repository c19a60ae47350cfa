// What the two files that use oneDNN share (onednn_convolution.cpp, onednn_linear.cpp; only they
// include this header, and only when tcprof is built with oneDNN's): one CPU engine, and the post-op
// call whose signature oneDNN 3 changed.
#pragma once
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

}  // namespace tcprof
