#include "compiler/backends/cpp/run/linear_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/backends/cpp/run/mkl_packed_linear.h"
#include "compiler/backends/cpp/run/onednn_convolution.h"
#include "compiler/backends/cpp/run/onednn_linear.h"

namespace tcprof {

std::string forced_linear_gemm() {
  const char* v = std::getenv("TCPROF_LINEAR_GEMM");
  return v == nullptr ? "" : v;
}

bool linear_gemm_takes_onednn() {
  const std::string forced = forced_linear_gemm();
  return (forced.empty() || forced == "onednn") && onednn_layout_enabled();
}

at::Tensor transposed_weight(const at::Tensor& w) {
  TORCH_CHECK(w.dim() == 2 && w.scalar_type() == at::kFloat, "transposed_weight: a 2-D float weight");
  const at::Tensor src = w.contiguous();
  const int64_t n = src.size(0), k = src.size(1);
  at::Tensor out = at::empty({k, n}, src.options());
  const float* s = src.data_ptr<float>();
  float* d = out.data_ptr<float>();
  // 16 x 16 tiles (measured: 1.8x faster than 32 x 32 on a 3072 x 768 weight).
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < n; r0 += kTile) {
    const int64_t r1 = std::min(n, r0 + kTile);
    for (int64_t c0 = 0; c0 < k; c0 += kTile) {
      const int64_t c1 = std::min(k, c0 + kTile);
      for (int64_t c = c0; c < c1; ++c) {
        for (int64_t r = r0; r < r1; ++r) d[c * n + r] = s[r * k + c];
      }
    }
  }
  return out;
}

at::Tensor linear_transposed(const at::Tensor& x, const at::Tensor& wt, const at::Tensor* bias) {
  const int64_t k = wt.size(0), n = wt.size(1);
  std::vector<int64_t> out_sizes = x.sizes().vec();
  out_sizes.back() = n;
  at::Tensor y = at::empty(out_sizes, x.options());
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) rows *= x.size(d);
  at::Tensor y2 = y.view({rows, n});
  at::Tensor x2 = x.reshape({rows, k});
  if (bias != nullptr) at::addmm_out(y2, *bias, x2, wt);
  else at::mm_out(y2, x2, wt);
  return y;
}

void apply_activation(at::Tensor& y, WindowKernel::Activation activation) {
  switch (activation) {
    case WindowKernel::Activation::None: break;
    case WindowKernel::Activation::Gelu: y = at::gelu(y); break;
    case WindowKernel::Activation::GeluTanh: y = at::gelu(y, "tanh"); break;
  }
}

PreparedLinear::PreparedLinear(const at::Tensor& w, const at::Tensor* bias, int64_t rows, WindowKernel::Activation activation,
                               LinearEpilogueFn epilogue)
    : activation_(activation) {
  if (bias != nullptr) bias_ = bias->contiguous();
  // oneDNN first, then MKL's packed GEMM where LibTorch has it, then BLAS. MKL's packed GEMM is
  // 12-19% faster over the GPT and ViT-B on this Xeon, but its packed copy of a weight is 2-30x the
  // weight (at least about 9 MB each: ViT-B's 48 would hold 870 MB, the GPT's 17 about 155 MB,
  // where oneDNN's copies are the weights' size), so it is chosen by TCPROF_LINEAR_GEMM=mkl (as
  // the Inductor table does, like for like with Inductor's freezing, which packs the same way).
  const std::string forced = forced_linear_gemm();
  auto allowed = [&](const char* library) { return forced.empty() || forced == library; };
  if (linear_gemm_takes_onednn()) {
    try {
      onednn_ = std::make_unique<OnednnLinear>(w, bias, rows, activation);
      return;
    } catch (const std::runtime_error&) {  // no oneDNN matmul for it
    }
  }
  // MKL and BLAS cannot apply the activation; with the generated epilogue they run without the
  // bias too, which the epilogue adds in the same pass.
  if (epilogue != nullptr && activation != WindowKernel::Activation::None) epilogue_ = epilogue;
  if (allowed("mkl") && MklPackedLinear::available()) {
    mkl_ = std::make_unique<MklPackedLinear>(w, epilogue_ ? nullptr : bias, rows);
    return;
  }
  transposed_ = transposed_weight(w);  // OpenBLAS (or whatever BLAS LibTorch has)
}

PreparedLinear::~PreparedLinear() = default;

at::Tensor PreparedLinear::operator()(const at::Tensor& x) const {
  if (onednn_) return (*onednn_)(x);
  const at::Tensor* gemm_bias = bias_.defined() && !epilogue_ ? &bias_ : nullptr;
  at::Tensor y = mkl_ ? (*mkl_)(x) : linear_transposed(x, transposed_, gemm_bias);
  if (!epilogue_) {
    apply_activation(y, activation_);
    return y;
  }
  const void* in[2] = {y.data_ptr(), bias_.defined() ? bias_.data_ptr() : nullptr};
  void* out[1] = {y.data_ptr()};
  const int64_t rows = y.numel() / std::max<int64_t>(1, y.size(-1));
  if (y.numel() > 0) epilogue_(in, out, &rows, nullptr);
  return y;
}

const char* PreparedLinear::method() const { return onednn_ ? "onednn" : mkl_ ? "mkl" : "blas"; }

}  // namespace tcprof
