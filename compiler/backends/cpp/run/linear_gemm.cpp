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

const char* linear_gemm_method_name(LinearGemmMethod method) {
  switch (method) {
    case LinearGemmMethod::OneDnn: return "onednn";
    case LinearGemmMethod::OneDnnEpilogue: return "onednn+epilogue";
    case LinearGemmMethod::Mkl: return "mkl";
    case LinearGemmMethod::Blas: return "blas";
  }
  return "?";
}

std::vector<LinearGemmMethod> linear_gemm_methods(bool epilogue) {
  using M = LinearGemmMethod;
  const std::string forced = forced_linear_gemm();
  const bool fastest = forced == "fastest";
  std::vector<M> out;
  if ((forced.empty() || fastest || forced == "onednn") && onednn_layout_enabled()) {
    if (epilogue) out.push_back(M::OneDnnEpilogue);
    out.push_back(M::OneDnn);
  }
  // MKL's packed copy of a weight costs memory (2-30x the weight on the Xeon, the weight plus
  // about 5.7 MB on the AVX2 EPYC; backend.md), so it is raced only where asked ("fastest");
  // unasked, it runs only where oneDNN is missing.
  if ((fastest || forced == "mkl" || (forced.empty() && out.empty())) && MklPackedLinear::available()) out.push_back(M::Mkl);
  if (fastest || out.empty()) out.push_back(M::Blas);
  return out;
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
                               LinearEpilogueFn epilogue, std::optional<LinearGemmMethod> method)
    : activation_(activation) {
  if (bias != nullptr) bias_ = bias->contiguous();
  if (epilogue != nullptr && activation == WindowKernel::Activation::None) epilogue = nullptr;
  if (method) {
    if (!prepare(*method, w, bias, rows, epilogue)) {
      throw std::runtime_error(std::string("a linear cannot run through ") + linear_gemm_method_name(*method) + " here");
    }
    return;
  }
  for (LinearGemmMethod m : linear_gemm_methods(epilogue != nullptr)) {
    if (prepare(m, w, bias, rows, epilogue)) return;
  }
  prepare(LinearGemmMethod::Blas, w, bias, rows, epilogue);
}

bool PreparedLinear::prepare(LinearGemmMethod method, const at::Tensor& w, const at::Tensor* bias, int64_t rows,
                             LinearEpilogueFn epilogue) {
  using M = LinearGemmMethod;
  // The epilogue adds the bias in its pass, so a GEMM followed by it runs without one.
  const bool with_epilogue = method != M::OneDnn && epilogue != nullptr;
  if (method == M::OneDnnEpilogue && epilogue == nullptr) return false;
  const at::Tensor* gemm_bias = with_epilogue ? nullptr : bias;
  switch (method) {
    case M::OneDnn:
    case M::OneDnnEpilogue:
      if (!onednn_layout_enabled()) return false;
      try {
        onednn_ = std::make_unique<OnednnLinear>(w, gemm_bias, rows, method == M::OneDnn ? activation_ : WindowKernel::Activation::None);
      } catch (const std::runtime_error&) {  // no oneDNN matmul for it
        return false;
      }
      break;
    case M::Mkl:
      if (!MklPackedLinear::available()) return false;
      mkl_ = std::make_unique<MklPackedLinear>(w, gemm_bias, rows);
      break;
    case M::Blas:
      transposed_ = transposed_weight(w);  // OpenBLAS (or whatever BLAS LibTorch has)
      break;
    default:  // a method this build does not know (a damaged autotune file)
      return false;
  }
  method_ = method;
  epilogue_ = with_epilogue ? epilogue : nullptr;
  return true;
}

PreparedLinear::~PreparedLinear() = default;

at::Tensor PreparedLinear::operator()(const at::Tensor& x) const {
  if (method_ == LinearGemmMethod::OneDnn) return (*onednn_)(x);  // bias and activation in its output pass
  at::Tensor y = onednn_ ? (*onednn_)(x) : mkl_ ? (*mkl_)(x)
                                                : linear_transposed(x, transposed_, bias_.defined() && !epilogue_ ? &bias_ : nullptr);
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

const char* PreparedLinear::method() const { return linear_gemm_method_name(method_); }

}  // namespace tcprof
