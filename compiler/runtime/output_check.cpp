#include "compiler/runtime/output_check.h"

#include <cmath>
#include <sstream>

#include <ATen/ATen.h>
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

// The f64 oracle's verdict on a float32 tensor that failed the elementwise test (see the header):
// every finite element is within twice eager's own error of the exact value, plus the tolerance,
// plus (downstream of a reduction) 1e-3 of the tensor's RMS, plus (of a layer norm) 1e-4.
bool oracle_accepts(const at::Tensor& c, const at::Tensor& e, const at::Tensor& t, const Tolerance& tol,
                    Dependence dependence, std::string* detail) {
  at::Tensor finite = c.isfinite() & e.isfinite() & t.isfinite();
  at::Tensor cm = c.masked_select(finite), em = e.masked_select(finite), tm = t.masked_select(finite);
  if (cm.numel() == 0) return false;
  const double rms_t = tm.pow(2).mean().sqrt().item<double>();
  double row_slack = dependence >= Dependence::Reduction ? tol.reduction_rms_fraction * rms_t : 0;
  if (dependence == Dependence::Normalization) row_slack += tol.normalization_atol;
  at::Tensor err_c = (cm - tm).abs(), err_e = (em - tm).abs();
  at::Tensor bad = err_c > tol.oracle_multiplier * err_e + tol.f32_atol + tol.f32_rtol * tm.abs() + row_slack;
  *detail += fmt::format("; f64 oracle: rmse compiled {:.3g}, eager {:.3g}, rms {:.3g}{}",
                         err_c.pow(2).mean().sqrt().item<double>(), err_e.pow(2).mean().sqrt().item<double>(), rms_t,
                         dependence == Dependence::Normalization ? " (after a layer norm)"
                         : dependence == Dependence::Reduction   ? " (after a reduction)"
                                                                 : "");
  if (!bad.any().item<bool>()) return true;
  if (tol.whole_tensor_accuracy || dependence == Dependence::Normalization) {
    const double rmse_c = err_c.pow(2).mean().sqrt().item<double>(), rmse_e = err_e.pow(2).mean().sqrt().item<double>();
    const double max_c = err_c.max().item<double>(), max_e = err_e.max().item<double>();
    if (rmse_c <= tol.oracle_multiplier * rmse_e + tol.f32_atol && max_c <= tol.oracle_multiplier * max_e + tol.f32_atol) {
      return true;
    }
    *detail += fmt::format(", worst error compiled {:.3g}, eager {:.3g}", max_c, max_e);
  }
  int64_t i = first_true(bad);
  *detail += fmt::format(", finite element {} is off by {:.3g} (compiled {:.9g}, oracle {:.9g}, eager off by {:.3g})", i,
                         at_index(err_c, i), at_index(cm, i), at_index(tm, i), at_index(err_e, i));
  return false;
}

// Elements that are equal (infinities included), both NaN, or within |a - b| <= atol + rtol|b|.
at::Tensor close_mask(const at::Tensor& a, const at::Tensor& b, double atol, double rtol) {
  return (a == b) | (a.isnan() & b.isnan()) | ((a - b).abs() <= atol + rtol * b.abs());
}

Comparison compare_tensor(const at::Tensor& compiled, const at::Tensor& eager, const at::Tensor* oracle,
                          const Tolerance& tol, Dependence dependence, const std::string& label) {
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
    if (oracle_accepts(c, e, t, tol, dependence, &detail)) {
      r.oracle_used = true;
      return r;
    }
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
Comparison compare_at(const c10::IValue& compiled, const c10::IValue& eager, const c10::IValue* oracle,
                      const Tolerance& tol, const std::vector<Dependence>& dependence, bool top, const std::string& label) {
  auto reduced = [&](size_t i) { return i < dependence.size() ? dependence[i] : Dependence::Normalization; };
  if (compiled.isTensor() && eager.isTensor()) {
    const at::Tensor* t = oracle && oracle->isTensor() ? &oracle->toTensor() : nullptr;
    return compare_tensor(compiled.toTensor(), eager.toTensor(), t, tol, reduced(0), label);
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
      Comparison r = compare_at(a[i], b[i], o.size() == a.size() ? &o[i] : nullptr, tol, item_reduced, false,
                                fmt::format("{}[{}]", label, i));
      if (!r.ok) return r;
      all.oracle_used = all.oracle_used || r.oracle_used;
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
                          const Tolerance& tol, const std::vector<Dependence>& dependence) {
  return compare_at(compiled, eager, oracle, tol, dependence, true, "output");
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
