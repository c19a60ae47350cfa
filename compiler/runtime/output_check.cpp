#include "compiler/runtime/output_check.h"

#include <cmath>
#include <limits>
#include <sstream>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/DefaultDtype.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tcprof {
namespace {

std::string index_text(int64_t flat, at::IntArrayRef sizes) {
  std::vector<int64_t> idx(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    idx[d] = sizes[d] > 0 ? flat % sizes[d] : 0;
    flat = sizes[d] > 0 ? flat / sizes[d] : 0;
  }
  return fmt::format("[{}]", fmt::join(idx, ","));
}

int64_t first_true(const at::Tensor& flat_mask) { return flat_mask.nonzero().view(-1)[0].item<int64_t>(); }

double at_index(const at::Tensor& flat, int64_t i) { return flat[i].item<double>(); }

Comparison failed(const std::string& label, const std::string& message) {
  Comparison r;
  r.ok = false;
  r.problem = label + ": " + message;
  return r;
}

// Rounding samples of one tensor: eager's and the oracle's results on perturbed inputs.
struct TensorSamples {
  std::vector<at::Tensor> eager, oracle;
};

// The f64 oracle's verdict on a float32 tensor that failed the elementwise test (see the header):
// every finite element is within twice eager's own error of the exact value, plus the tolerance,
// plus (downstream of a reduction) 1e-3 of the tensor's RMS, plus (of a layer norm) 1e-4. With
// rounding samples, eager's error is the largest over the draws and the exact value's movement
// between draws is allowed on top.
// `atol`, `rtol`: the output dtype's elementwise tolerance, which says where eager itself misses.
bool oracle_accepts(const at::Tensor& c, const at::Tensor& e, const at::Tensor& t, const Tolerance& tol,
                    Dependence dependence, const TensorSamples* samples, double atol, double rtol,
                    std::string* detail) {
  at::Tensor finite = c.isfinite() & e.isfinite() & t.isfinite();
  at::Tensor cm = c.masked_select(finite), em = e.masked_select(finite), tm = t.masked_select(finite);
  if (cm.numel() == 0) return false;
  const double rms_t = tm.pow(2).mean().sqrt().item<double>();
  double row_slack = dependence >= Dependence::Reduction ? tol.reduction_rms_fraction * rms_t : 0;
  if (dependence == Dependence::Normalization) row_slack += tol.normalization_atol;
  at::Tensor err_c = (cm - tm).abs(), err_e = (em - tm).abs();
  at::Tensor ref = err_e, spread = at::zeros_like(err_e);
  double rmse_ref = err_e.pow(2).mean().sqrt().item<double>(), max_ref = err_e.max().item<double>();
  if (samples) {
    for (size_t k = 0; k < samples->eager.size(); ++k) {
      // A draw that overflows somewhere says nothing there.
      at::Tensor ek = samples->eager[k].masked_select(finite), tk = samples->oracle[k].masked_select(finite);
      at::Tensor err_k = at::nan_to_num((ek - tk).abs(), 0.0, 0.0, 0.0);
      ref = at::maximum(ref, err_k);
      spread = at::maximum(spread, at::nan_to_num((tk - tm).abs(), 0.0, 0.0, 0.0));
      rmse_ref = std::max(rmse_ref, err_k.pow(2).mean().sqrt().item<double>());
      max_ref = std::max(max_ref, err_k.max().item<double>());
    }
  }
  at::Tensor bad = err_c > tol.oracle_multiplier * ref + spread + tol.f32_atol + tol.f32_rtol * tm.abs() + row_slack;
  *detail += fmt::format("; f64 oracle: rmse compiled {:.3g}, eager {:.3g}, rms {:.3g}{}",
                         err_c.pow(2).mean().sqrt().item<double>(), err_e.pow(2).mean().sqrt().item<double>(), rms_t,
                         dependence == Dependence::Normalization ? " (after a layer norm)"
                         : dependence == Dependence::Reduction   ? " (after a reduction)"
                                                                 : "");
  if (samples) {
    *detail += fmt::format("; {} rounding draws: eager's rmse up to {:.3g}, the exact value moves up to {:.3g}",
                           samples->eager.size(), rmse_ref, spread.max().item<double>());
  }
  if (!bad.any().item<bool>()) return true;
  // Spots where eager itself misses the exact value by more than the tolerance (a GELU tail where
  // 0.5 x (1 + erf) keeps one f32 quantum of 1 + erf, under a square root): a failing element
  // there passes within twice the multiplier of eager's error at that element, when compiled is
  // as accurate as eager over all such spots (rmse); everywhere else the rule above.
  at::Tensor eager_off = ref > atol + rtol * tm.abs() + row_slack;
  if (!(bad & ~eager_off).any().item<bool>()) {
    at::Tensor loose = err_c > 2 * tol.oracle_multiplier * ref + spread + atol + rtol * tm.abs() + row_slack;
    const double rmse_c_off = err_c.masked_select(eager_off).pow(2).mean().sqrt().item<double>();
    const double rmse_e_off = ref.masked_select(eager_off).pow(2).mean().sqrt().item<double>();
    if (!(bad & loose).any().item<bool>() && rmse_c_off <= tol.oracle_multiplier * rmse_e_off + tol.f32_atol) return true;
    *detail += fmt::format(", at the {} spots where eager misses the tolerance itself: rmse compiled {:.3g}, eager {:.3g}",
                           eager_off.sum().item<int64_t>(), rmse_c_off, rmse_e_off);
  }
  if (tol.whole_tensor_accuracy || dependence == Dependence::Normalization) {
    // Each element's error less what an ulp of the inputs moves its exact value: one element near
    // a jump must not loosen the others.
    at::Tensor beyond = at::clamp_min(err_c - spread, 0);
    const double rmse_c = beyond.pow(2).mean().sqrt().item<double>(), max_c = beyond.max().item<double>();
    if (rmse_c <= tol.oracle_multiplier * rmse_ref + tol.f32_atol && max_c <= tol.oracle_multiplier * max_ref + tol.f32_atol) {
      return true;
    }
    *detail += fmt::format(", worst error compiled {:.3g}, eager {:.3g}", max_c, max_ref);
  }
  int64_t i = first_true(bad);
  *detail += fmt::format(", finite element {} is off by {:.3g} (compiled {:.9g}, oracle {:.9g}, eager off by {:.3g})", i,
                         at_index(err_c, i), at_index(cm, i), at_index(tm, i), at_index(ref, i));
  return false;
}

// Elements that are equal (infinities included), both NaN, or within |a - b| <= atol + rtol|b|.
at::Tensor close_mask(const at::Tensor& a, const at::Tensor& b, double atol, double rtol) {
  return (a == b) | (a.isnan() & b.isnan()) | ((a - b).abs() <= atol + rtol * b.abs());
}

Comparison compare_tensor(const at::Tensor& compiled, const at::Tensor& eager, const at::Tensor* oracle,
                          const Tolerance& tol, Dependence dependence, const std::vector<c10::IValue>* eager_draws,
                          const std::vector<c10::IValue>* oracle_draws, const std::string& label) {
  if (compiled.sizes() != eager.sizes()) {
    return failed(label, fmt::format("shape [{}], eager [{}]", fmt::join(compiled.sizes(), ","), fmt::join(eager.sizes(), ",")));
  }
  if (compiled.scalar_type() != eager.scalar_type()) {
    return failed(label, fmt::format("dtype {}, eager {}", c10::toString(compiled.scalar_type()), c10::toString(eager.scalar_type())));
  }
  Comparison r;
  const int64_t n = eager.numel();
  if (n == 0) return r;
  const auto sizes = eager.sizes();
  if (!at::isFloatingType(eager.scalar_type())) {
    at::Tensor differ = (compiled != eager).reshape(-1);
    if (!differ.any().item<bool>()) return r;
    int64_t i = first_true(differ);
    return failed(label, fmt::format("{} of {} elements differ; first at {}: compiled {}, eager {}",
                                     differ.sum().item<int64_t>(), n, index_text(i, sizes),
                                     at_index(compiled.reshape(-1), i), at_index(eager.reshape(-1), i)));
  }
  at::Tensor c = compiled.to(at::kDouble).reshape(-1), e = eager.to(at::kDouble).reshape(-1);
  at::Tensor t;
  if (oracle && oracle->sizes() == eager.sizes()) t = oracle->to(at::kDouble).reshape(-1);
  // An f64 result is held to f64's tolerance when eager computes it in f64 (then it is the oracle's
  // to a few ulps); one that went through f32 values (an f32 layer norm added to an f64 input) has
  // f32's precision and gets f32's tolerance, even where it matches the oracle to 1e-9 by luck.
  bool f64 = eager.scalar_type() == at::kDouble;
  if (f64 && t.defined() && !close_mask(e, t, 1e-300, tol.f64_path_rtol).all().item<bool>()) f64 = false;
  const bool bf16 = eager.scalar_type() == at::kBFloat16, f16 = eager.scalar_type() == at::kHalf;
  const double rtol = f64 ? tol.f64_rtol : bf16 ? tol.bf16_rtol : f16 ? tol.f16_rtol : tol.f32_rtol;
  const double atol = f64 ? tol.f64_atol : (bf16 || f16) ? tol.low_precision_atol : tol.f32_atol;
  at::Tensor nan_c = c.isnan(), nan_e = e.isnan();
  at::Tensor nan_differs = nan_c != nan_e;
  if (nan_differs.any().item<bool>()) {
    int64_t i = first_true(nan_differs);
    return failed(label, fmt::format("NaN in one result only at {} of {} elements; first at {}: compiled {}, eager {}",
                                     nan_differs.sum().item<int64_t>(), n, index_text(i, sizes), at_index(c, i),
                                     at_index(e, i)));
  }
  at::Tensor err = (c - e).abs();
  at::Tensor close = close_mask(c, e, atol, rtol);
  if (close.all().item<bool>()) return r;
  at::Tensor bad = ~close;
  int64_t i = first_true(bad);
  at::Tensor finite_both = c.isfinite() & e.isfinite();
  at::Tensor finite_err = err.masked_select(finite_both);
  at::Tensor rel = (err / e.abs()).masked_select(finite_both & (e != 0));
  std::string detail = fmt::format(
      "{} of {} elements outside |c-e| <= {:g} + {:g}|e|; max abs err {:.3g}, max rel err {:.3g}; first at {}: "
      "compiled {:.9g}, eager {:.9g}",
      bad.sum().item<int64_t>(), n, atol, rtol, finite_err.numel() ? finite_err.max().item<double>() : NAN,
      rel.numel() ? rel.max().item<double>() : NAN, index_text(i, sizes), at_index(c, i), at_index(e, i));
  // An infinity on one side only is never rounding.
  bool nonfinite_bad = (bad & ~finite_both).any().item<bool>();
  if (!f64 && t.defined() && !nonfinite_bad) {
    detail += fmt::format(", oracle {:.9g}", at_index(t, i));
    // Draws of another shape (a dynamic size that differs) cannot be used.
    std::optional<TensorSamples> samples;
    if (eager_draws && oracle_draws && eager_draws->size() == oracle_draws->size()) {
      samples.emplace();
      for (size_t k = 0; k < eager_draws->size(); ++k) {
        const c10::IValue &ek = (*eager_draws)[k], &tk = (*oracle_draws)[k];
        if (!ek.isTensor() || !tk.isTensor() || ek.toTensor().sizes() != eager.sizes() ||
            tk.toTensor().sizes() != eager.sizes()) {
          samples.reset();
          break;
        }
        samples->eager.push_back(ek.toTensor().to(at::kDouble).reshape(-1));
        samples->oracle.push_back(tk.toTensor().to(at::kDouble).reshape(-1));
      }
    }
    // Without draws first: the draws may only widen the verdict, never narrow it.
    const std::string before = detail;
    if (oracle_accepts(c, e, t, tol, dependence, nullptr, atol, rtol, &detail)) {
      r.oracle_used = true;
      return r;
    }
    if (samples) {
      detail = before;
      if (oracle_accepts(c, e, t, tol, dependence, &*samples, atol, rtol, &detail)) {
        r.oracle_used = true;
        r.samples_used = true;
        return r;
      }
    }
    Comparison f = failed(label, detail);
    f.oracle_rejected = !samples.has_value();
    return f;
  }
  return failed(label, detail);
}

std::string kind_of(const c10::IValue& v) { return v.tagKind(); }

std::string text(const c10::IValue& v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// `dependence`: per top-level output (a tuple's items); missing entries count as Normalization.
// Item i of every draw, or nothing when a draw is not a tuple or list of the same length.
std::optional<std::vector<c10::IValue>> draw_items(const std::vector<c10::IValue>* draws, size_t i, size_t n) {
  if (!draws) return std::nullopt;
  std::vector<c10::IValue> out;
  for (const auto& d : *draws) {
    if (d.isTuple() && d.toTupleRef().elements().size() == n) {
      out.push_back(d.toTupleRef().elements()[i]);
    } else if (d.isList() && d.toListRef().size() == n) {
      out.push_back(d.toListRef()[i]);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

Comparison compare_at(const c10::IValue& compiled, const c10::IValue& eager, const c10::IValue* oracle,
                      const Tolerance& tol, const std::vector<Dependence>& dependence, const RoundingSamples* draws,
                      bool top, const std::string& label) {
  auto reduced = [&](size_t i) { return i < dependence.size() ? dependence[i] : Dependence::Normalization; };
  if (compiled.isTensor() && eager.isTensor()) {
    const at::Tensor* t = oracle && oracle->isTensor() ? &oracle->toTensor() : nullptr;
    return compare_tensor(compiled.toTensor(), eager.toTensor(), t, tol, reduced(0), draws ? &draws->eager : nullptr,
                          draws ? &draws->oracle : nullptr, label);
  }
  if ((compiled.isTuple() && eager.isTuple()) || (compiled.isList() && eager.isList())) {
    auto items = [](const c10::IValue& v) {
      return v.isTuple() ? v.toTupleRef().elements().vec() : v.toListRef().vec();
    };
    std::vector<c10::IValue> a = items(compiled), b = items(eager), o;
    if (oracle && (oracle->isTuple() || oracle->isList())) o = items(*oracle);
    if (a.size() != b.size()) return failed(label, fmt::format("{} items, eager {}", a.size(), b.size()));
    Comparison all;
    for (size_t i = 0; i < a.size(); ++i) {
      std::vector<Dependence> item_reduced = {top ? reduced(i) : reduced(0)};
      std::optional<RoundingSamples> item_draws;
      if (draws) {
        auto e = draw_items(&draws->eager, i, a.size()), t = draw_items(&draws->oracle, i, a.size());
        if (e && t) item_draws = RoundingSamples{std::move(*e), std::move(*t)};
      }
      Comparison r = compare_at(a[i], b[i], o.size() == a.size() ? &o[i] : nullptr, tol, item_reduced,
                                item_draws ? &*item_draws : nullptr, false, fmt::format("{}[{}]", label, i));
      if (!r.ok) return r;
      all.oracle_used = all.oracle_used || r.oracle_used;
      all.samples_used = all.samples_used || r.samples_used;
    }
    return all;
  }
  if (kind_of(compiled) != kind_of(eager)) {
    return failed(label, fmt::format("compiled returned {}, eager {}", kind_of(compiled), kind_of(eager)));
  }
  if (compiled.isDouble()) {
    double a = compiled.toDouble(), b = eager.toDouble();
    bool same = a == b || (std::isnan(a) && std::isnan(b)) || std::fabs(a - b) <= tol.f64_atol + tol.f64_rtol * std::fabs(b);
    return same ? Comparison{} : failed(label, fmt::format("compiled {}, eager {}", a, b));
  }
  if (compiled == eager) return Comparison{};
  return failed(label, fmt::format("compiled {}, eager {}", text(compiled), text(eager)));
}

}  // namespace

Comparison compare_values(const c10::IValue& compiled, const c10::IValue& eager, const c10::IValue* oracle,
                          const Tolerance& tol, const std::vector<Dependence>& dependence,
                          const SampleRounding& sample_rounding) {
  Comparison r = compare_at(compiled, eager, oracle, tol, dependence, nullptr, true, "output");
  if (r.ok || !r.oracle_rejected || !sample_rounding) return r;
  // Only now, on the rare tensor the oracle rule rejects, are the draws run.
  std::optional<RoundingSamples> draws = sample_rounding();
  if (!draws || draws->eager.empty() || draws->eager.size() != draws->oracle.size()) return r;
  return compare_at(compiled, eager, oracle, tol, dependence, &*draws, true, "output");
}

bool identical_values(const c10::IValue& a, const c10::IValue& b) {
  if (a.isTensor() && b.isTensor()) {
    const at::Tensor &x = a.toTensor(), &y = b.toTensor();
    if (x.sizes() != y.sizes() || x.scalar_type() != y.scalar_type()) return false;
    if (x.numel() == 0) return true;
    if (!at::isFloatingType(x.scalar_type())) return at::equal(x, y);
    return ((x == y) | (x.isnan() & y.isnan())).all().item<bool>();
  }
  if ((a.isTuple() && b.isTuple()) || (a.isList() && b.isList())) {
    auto items = [](const c10::IValue& v) { return v.isTuple() ? v.toTupleRef().elements().vec() : v.toListRef().vec(); };
    std::vector<c10::IValue> x = items(a), y = items(b);
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!identical_values(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.isDouble() && b.isDouble()) {
    const double x = a.toDouble(), y = b.toDouble();
    return x == y || (std::isnan(x) && std::isnan(y));
  }
  return a.tagKind() == b.tagKind() && a == b;
}

void perturb_by_an_ulp(std::vector<c10::IValue>& inputs, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (auto& v : inputs) {
    if (!v.isTensor() || !at::isFloatingType(v.toTensor().scalar_type())) continue;
    const at::Tensor& t = v.toTensor();
    const c10::Storage& storage = t.storage();
    const int64_t n = static_cast<int64_t>(storage.nbytes() / t.element_size());
    if (n == 0) continue;
    // Every element of the storage, whatever views of it the input is.
    at::Tensor whole = at::empty({0}, t.options().requires_grad(false));
    whole.set_(storage, 0, {n}, {1});
    const double eps = t.scalar_type() == at::kDouble  ? std::numeric_limits<double>::epsilon()
                       : t.scalar_type() == at::kHalf  ? 9.765625e-4
                       : t.scalar_type() == at::kBFloat16 ? 7.8125e-3
                                                          : std::numeric_limits<float>::epsilon();
    at::Tensor sign = at::randint(0, 2, {n}, gen, at::TensorOptions().dtype(at::kDouble)) * 2 - 1;
    at::NoGradGuard no_grad;
    whole.copy_((whole.to(at::kDouble) * (1 + eps * sign)).to(t.scalar_type()));
  }
}

DefaultDtypeDouble::DefaultDtypeDouble() : saved_(c10::get_default_dtype()) {
  c10::set_default_dtype(caffe2::TypeMeta::Make<double>());
}
DefaultDtypeDouble::~DefaultDtypeDouble() { c10::set_default_dtype(saved_); }

torch::jit::Module f64_copy(const torch::jit::Module& module) {
  torch::jit::Module oracle = module.clone();
  for (const auto& p : oracle.named_parameters()) {
    if (p.value.is_floating_point()) p.value.set_data(p.value.to(at::kDouble));
  }
  for (const auto& b : oracle.named_buffers()) {
    if (b.value.is_floating_point()) b.value.set_data(b.value.to(at::kDouble));
  }
  return oracle;
}

std::optional<c10::IValue> run_f64(torch::jit::Module& oracle, const std::string& method, std::vector<c10::IValue> inputs,
                                   std::string* why_not) {
  for (auto& v : inputs) {
    if (v.isTensor() && at::isFloatingType(v.toTensor().scalar_type())) v = v.toTensor().to(at::kDouble);
  }
  try {
    DefaultDtypeDouble f64_defaults;
    return oracle.get_method(method)(std::move(inputs));
  } catch (const std::exception& e) {
    *why_not = fmt::format("\n(no f64 oracle: {})", e.what());
    return std::nullopt;
  }
}

}  // namespace tcprof
