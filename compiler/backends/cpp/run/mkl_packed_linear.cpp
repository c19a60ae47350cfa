#include "compiler/backends/cpp/run/mkl_packed_linear.h"

#include <optional>
#include <stdexcept>

#include <ATen/core/dispatch/Dispatcher.h>

namespace tcprof {
namespace {

struct MklOps {
  c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, int64_t)> reorder;
  c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                      const c10::optional<at::Tensor>&, int64_t)>
      linear;
};

// The schemas as LibTorch 2.x declares them; a LibTorch with other ones (or none) has no MKL path.
const std::optional<MklOps>& mkl_ops() {
  static const std::optional<MklOps> ops = []() -> std::optional<MklOps> {
    auto& dispatcher = c10::Dispatcher::singleton();
    auto reorder = dispatcher.findSchema({"mkl::_mkl_reorder_linear_weight", ""});
    auto linear = dispatcher.findSchema({"mkl::_mkl_linear", ""});
    if (!reorder || !linear) return std::nullopt;
    try {
      return MklOps{reorder->typed<at::Tensor(const at::Tensor&, int64_t)>(),
                    linear->typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                             const c10::optional<at::Tensor>&, int64_t)>()};
    } catch (const std::exception&) {  // another signature
      return std::nullopt;
    }
  }();
  return ops;
}

}  // namespace

bool MklPackedLinear::available() { return mkl_ops().has_value(); }

MklPackedLinear::MklPackedLinear(const at::Tensor& w, const at::Tensor* bias, int64_t rows)
    : weight_(w.contiguous()), rows_(rows) {
  if (!available()) throw std::runtime_error("this LibTorch has no MKL packed linear");
  if (bias != nullptr) bias_ = bias->contiguous();
  packed_ = mkl_ops()->reorder.call(weight_, rows_);
}

at::Tensor MklPackedLinear::operator()(const at::Tensor& x) const {
  c10::optional<at::Tensor> bias;
  if (bias_.defined()) bias = bias_;
  return mkl_ops()->linear.call(x.contiguous(), packed_, weight_, bias, rows_);
}

}  // namespace tcprof
