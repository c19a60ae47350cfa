// Whether a compiled result is eager's, up to the rounding compiled code may legitimately do: the
// one verdict `tcprof run --verify`, bench and the randomized differential test (bench/fuzz) give.
//
// Tolerance (f32). An element passes when |c - e| <= atol + rtol*|e| (rtol 1e-4, atol 1e-5),
// c compiled, e eager. Generated kernels legitimately round differently: they sum rows in another
// order (SIMD lanes, not ATen's cascade), use their own exp/erf/tanh (~1-2 ulp) and never fuse
// multiply-adds where ATen's vectorised kernels do. Those are a few ulps per op, but an
// ill-conditioned spot (x - y that cancels, a sum that cancels to ~0, a layer norm of an almost
// constant row, which amplifies the rounding of its mean by up to 1/sqrt(eps) ~ 300) turns them
// into relative errors no fixed elementwise tolerance separates from a bug. So a tensor that fails
// the elementwise test is judged against a float64 oracle t (the same module run eagerly with
// float parameters, inputs and default dtype in f64): it passes when every finite element is about
// as close to the exact value as eager's own f32 result,
//   |c - t| <= 2 |e - t| + atol + rtol |t|                        (PyTorch's compiler tests use
//                                                                  the same idea, with fp64_ref)
// plus, for outputs that depend on a reduction, 1e-3 of the tensor's RMS: eager's cascade sums
// err by ~log(n) ulps where the kernels' lane sums err by ~n/8, so eager's own error understates
// what a correct kernel may do there; and for outputs that depend on a layer norm also 1e-4
// absolute: a normalised value has scale ~1 whatever the tensor's RMS, and an (almost) constant
// row normalises to noise around its bias, (rounding of its mean)/sqrt(eps) in size, where
// eager's Welford mean errs less than the kernels' lane sums. A wrong kernel is off by the order
// of the values and fails.
// One sample of eager's error is luck: eager can land on the exact value where rounding makes any
// f32 result a few ulps of the summands off (a sum of terms of 3e5 that cancel to 0: eager 0,
// compiled 2^-5, fuzz case 50360477444814). So a tensor the oracle rule rejects is judged once
// more with rounding samples (RoundingSamples): eager and the oracle again on the same inputs
// perturbed by an ulp or two (the loss weights too, for gradients), several draws. Eager's error
// becomes the largest over the draws, and the exact value's own movement (|t_k - t|: how far an
// ulp of the inputs moves the answer, the output's conditioning) is allowed on top:
//   |c - t| <= 2 max(|e - t|, max_k |e_k - t_k|) + max_k |t_k - t| + atol + rtol |t| (+ slack)
// And where eager itself misses the exact value by more than the output dtype's elementwise
// tolerance (a GELU tail, where 0.5 x (1 + erf) keeps one f32 quantum of 1 + erf, under a square
// root: fuzz case 49148083810979), a failing element passes within twice the multiplier (4x) of
// eager's error at that element, when over all such spots compiled's rmse is within twice
// eager's. Outside such spots the elementwise oracle rule decides, or for gradients and layer-norm
// outputs the whole-tensor rule below, where each element's error first loses what an ulp of the
// inputs moves its exact value (one element near a jump does not loosen the others). A wrong
// kernel is off by the order of the values wherever the output is not that sensitive, and fails.
// NaN positions must match exactly and infinities must be equal; no oracle rescues either.
// f64 outputs: rtol 1e-9, atol 1e-10, when eager computed them in f64 throughout: then eager's
// result is the oracle's to a few f64 ulps (1e-12 relative). Otherwise it went through f32 values
// (an f32 layer norm added to an f64 input), has f32's precision, and is judged like an f32
// output; such a value can land within 1e-9 of the oracle by luck (one scalar in ~30 does: fuzz
// seed 1 found one), so 1e-9 is not the test of an f64 path.
// bf16 and f16 outputs: rtol 1.6e-2 and 1e-3, atol 1e-5 (torch.testing's), then the oracle rule.
// Integers and bools: exact. Shapes and dtypes: exact.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

namespace tcprof {

// What a value is computed through, as far as rounding goes (ordered: each includes the last).
enum class Dependence : uint8_t {
  Elementwise,    // pointwise ops only
  Reduction,      // a sum, mean or softmax: the summation order matters
  Normalization,  // a layer norm: a constant row normalises to rounding noise around its bias
};

struct Tolerance {
  double f32_rtol = 1e-4, f32_atol = 1e-5;
  double f64_rtol = 1e-9, f64_atol = 1e-10;
  double f64_path_rtol = 1e-12;
  // bf16 and f16 outputs (the cuda backend's kernels keep intermediates in float where eager
  // rounds after every op): torch.testing's defaults for them.
  double bf16_rtol = 1.6e-2, f16_rtol = 1e-3, low_precision_atol = 1e-5;  // eager within this of the oracle: it computed in f64 throughout
  double oracle_multiplier = 2.0;
  double reduction_rms_fraction = 1e-3;
  double normalization_atol = 1e-4;
  // Gradients (fuzz_graphs --backward): a tensor whose elements fail the rule above still passes
  // when it is as accurate as eager's as a whole: rmse and worst error against the oracle within
  // oracle_multiplier times eager's, plus atol. A gradient sums every path through the graph, and
  // an ill-conditioned op on one (1/sqrt(x) near 0 after a layer norm) multiplies the forward
  // values' rounding there by orders of magnitude, in eager and compiled alike but at elements
  // of their own. A wrong rule is off by the gradient's size where it applies and fails both.
  // Outputs computed through a layer norm get this rule too: a sum over a normalised row is
  // rounding noise around 0, and a square root of it (fuzz case 53259483529648) makes that noise
  // 1e-4, at different elements in eager and compiled code (rmse 3.5e-4 vs 3.6e-4 there).
  bool whole_tensor_accuracy = false;
};

struct Comparison {
  bool ok = true;
  bool oracle_used = false;   // the elementwise test failed and the f64 oracle accepted it
  bool samples_used = false;  // ... after the rounding samples widened eager's error (see above)
  bool oracle_rejected = false;  // failed where rounding samples could still decide
  std::string problem;        // what differs, with the first differing index and values
};

// Eager's and the oracle's results on the inputs perturbed by an ulp or two, one entry per draw,
// each shaped like the compared values.
struct RoundingSamples {
  std::vector<c10::IValue> eager, oracle;
};
// Runs the draws; asked for only when the oracle rule rejects a tensor. Nothing: no samples.
using SampleRounding = std::function<std::optional<RoundingSamples>()>;

// Compares a compiled result with eager's (tensors, tuples and lists of them, numbers).
// `oracle` may be null (no f64 rescue). `dependence`: per returned value, what it is computed
// through; missing entries count as Normalization (the loosest). `sample_rounding` may be empty.
Comparison compare_values(const c10::IValue& compiled, const c10::IValue& eager, const c10::IValue* oracle,
                          const Tolerance& tol, const std::vector<Dependence>& dependence = {},
                          const SampleRounding& sample_rounding = {});

// The draws' inputs: each floating tensor's storage multiplied by 1 +- its dtype's epsilon (a
// sign per element, from `seed`), in place, so that strides and broadcasts stay as they were.
void perturb_by_an_ulp(std::vector<c10::IValue>& inputs, uint64_t seed);
// How many draws `run --verify` and the fuzz harnesses take.
constexpr int kRoundingDraws = 4;

// Bit for bit the same (NaNs in the same places, tuples and lists item by item): whether a module
// run again on the same inputs gives what it gave, i.e. keeps no state the call changed.
bool identical_values(const c10::IValue& a, const c10::IValue& b);

// While it lives the default dtype is f64: the oracle computes in f64 throughout (float math on
// integers, cos of an int64 tensor, makes the default dtype).
class DefaultDtypeDouble {
 public:
  DefaultDtypeDouble();
  ~DefaultDtypeDouble();
  DefaultDtypeDouble(const DefaultDtypeDouble&) = delete;
  DefaultDtypeDouble& operator=(const DefaultDtypeDouble&) = delete;

 private:
  caffe2::TypeMeta saved_;
};

// The f64 oracle: a copy of `module` whose floating parameters and buffers are f64 (Module::to
// would convert bool and int buffers too).
torch::jit::Module f64_copy(const torch::jit::Module& module);

// The oracle's result of `method` on f64 copies of the inputs, under DefaultDtypeDouble. Nothing, with the reason in `why_not`, when
// f64 changes something the source relies on: then the elementwise test alone decides.
std::optional<c10::IValue> run_f64(torch::jit::Module& oracle, const std::string& method, std::vector<c10::IValue> inputs,
                                   std::string* why_not);

}  // namespace tcprof
