#include "compiler/optim/optimizer_update.h"

namespace tcprof {

const char* optimizer_update_source() {
  return R"UPDATE(
// The step's scalars, rounded to float once as LibTorch rounds them. AdamW (decoupled) multiplies
// the parameter by keep = 1 - lr * wd before the update; Adam (decay) adds wd * p to the gradient.
struct tc_adam_scalars {
  float b1, b2, one_minus_b1, one_minus_b2, eps, wd, keep;
  bool decoupled, decay;
};

// neg_step = -lr / (1 - beta1^t), sqrt_bias2 = sqrt(1 - beta2^t): per parameter, from its own step
// count t (parameters count their own steps, as torch::optim's do).
TC_OPTIM_FN void tc_adam_update(float& p, float g, float& m, float& v, const tc_adam_scalars& s, float neg_step,
                                float sqrt_bias2) {
  const float pj = s.decoupled ? p * s.keep : p;
  const float grad = s.decay ? g + s.wd * pj : g;
  const float mj = m * s.b1 + grad * s.one_minus_b1;
  const float vj = v * s.b2 + s.one_minus_b2 * (grad * grad);
  m = mj;
  v = vj;
  const float denom = sqrtf(vj) / sqrt_bias2 + s.eps;
  p = pj + neg_step * (mj / denom);
}

// SGD: d = g (+ wd * p); with momentum, the buffer becomes d on a parameter's first step and
// momentum * buffer + d after, and d is the buffer; p -= lr * d. Without momentum `buf` is unused.
TC_OPTIM_FN void tc_sgd_update(float& p, float g, float& buf, float neg_lr, float wd, float momentum, bool decay,
                               bool use_momentum, bool first) {
  float d = decay ? g + wd * p : g;
  if (use_momentum) {
    d = first ? d : buf * momentum + d;
    buf = d;
  }
  p = p + neg_lr * d;
}
)UPDATE";
}

}  // namespace tcprof
