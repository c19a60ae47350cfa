#include "bench/fuzz/differential_check.h"

#include "bench/fuzz/case_module.h"

#include <atomic>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>

#include <ATen/ATen.h>
#include <c10/core/DefaultDtype.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "compiler/runtime/compiled_module.h"
#include "compiler/frontend/model_loader.h"

namespace tcprof::fuzz {
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
  const double rtol = f64 ? tol.f64_rtol : tol.f32_rtol, atol = f64 ? tol.f64_atol : tol.f32_atol;
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

// Same sizes, strides and values (NaN equal to NaN): an input after the compiled call against the
// same input after the eager call.
bool same_tensor(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes() || a.strides() != b.strides() || a.scalar_type() != b.scalar_type()) return false;
  if (a.numel() == 0) return true;
  if (!at::isFloatingType(a.scalar_type())) return at::equal(a, b);
  return ((a == b) | (a.isnan() & b.isnan())).all().item<bool>();
}

// Adds 1% to the first finite element of the first float tensor (CheckOptions::perturb_compiled_output).
bool perturb(c10::IValue& v) {
  if (v.isTensor() && at::isFloatingType(v.toTensor().scalar_type()) && v.toTensor().numel() > 0) {
    at::Tensor t = v.toTensor().contiguous().clone();
    at::Tensor flat = t.view(-1);
    at::Tensor finite = flat.isfinite();
    if (!finite.any().item<bool>()) return false;
    int64_t i = first_true(finite);
    double x = flat[i].item<double>();
    flat[i] = x + 1e-2 * std::max(1.0, std::fabs(x));
    v = t;
    return true;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> items = v.toTupleRef().elements().vec();
    for (auto& item : items) {
      if (perturb(item)) {
        v = c10::ivalue::Tuple::create(std::move(items));
        return true;
      }
    }
  }
  return false;
}

}  // namespace

Comparison compare_values(const c10::IValue& compiled, const c10::IValue& eager, const c10::IValue* oracle,
                          const Tolerance& tol, const std::vector<Dependence>& dependence) {
  return compare_at(compiled, eager, oracle, tol, dependence, true, "output");
}

const char* status_name(CaseOutcome::Status status) {
  switch (status) {
    case CaseOutcome::Status::Pass: return "pass";
    case CaseOutcome::Status::Mismatch: return "MISMATCH";
    case CaseOutcome::Status::Error: return "ERROR";
    case CaseOutcome::Status::Invalid: return "invalid";
  }
  return "?";
}

CaseOutcome check_case(const FuzzCase& c, const CheckOptions& options) {
  if (options.gradients) return check_case_gradients(c, options);
  static std::atomic<int64_t> serial{0};
  CaseOutcome out;
  torch::NoGradGuard no_grad;
  // The reference is LibTorch op by op: the graph executor's optimisations (fusers, which change
  // rounding themselves) stay off.
  torch::jit::setGraphExecutorOptimize(false);
  const std::string archive = fmt::format("{}/case-{}-{}.pt", options.work_dir, c.seed, serial++);
  auto finish = [&](CaseOutcome::Status status, const std::string& problem, const CompiledModule* compiled) {
    out.status = status;
    if (compiled) count_program(*compiled, out);
    if (status != CaseOutcome::Status::Pass) {
      out.report = fmt::format("{}: {}\n", status_name(status), problem);
      if (c.name.empty()) {
        out.report += fmt::format("reproduce: fuzz_graphs --case {}{}\n", c.seed, c.known_bug_patterns ? "" : " --avoid-known-bugs");
      }
      out.report += describe_case(c);
      if (compiled) out.report += describe_program(*compiled);
    }
    std::error_code ec;
    if (status != CaseOutcome::Status::Pass && options.keep_failed_archive) {
      out.archive = archive;
    } else {
      std::filesystem::remove(archive, ec);
    }
    return out;
  };

  try {
    save_module(c, archive);
  } catch (const std::exception& e) {
    return finish(CaseOutcome::Status::Invalid, fmt::format("TorchScript rejects the module: {}", e.what()), nullptr);
  }
  // Loaded through tcprof's own loader, as `tcprof run` loads models.
  LoadedModel model = load_model(archive);
  LoadedModel oracle = load_oracle(archive);
  CompileOptions compile;
  compile.backend = "cpp";
  compile.strict = true;     // a kernel that does not compile is a failure, not an eager fallback
  compile.fullgraph = true;  // one graph: every op goes through the backend
  if (c.declare_dynamic) {
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      for (int d : c.inputs[i].dynamic_dims) compile.dynamic.push_back({static_cast<int>(i), d});
    }
  }
  CompiledModule compiled(model, compile, nullptr);

  struct Call {
    int64_t dynamic_size;
    std::string what;
  };
  std::vector<Call> calls = {{-1, "first call: compiles, returns the capture's values"},
                             {-1, "second call: same sizes, new values, runs the compiled code"},
                             {-1, "third call: same sizes again (nothing may leak from the previous call)"}};
  for (int64_t s : c.dynamic_sizes) calls.push_back({s, fmt::format("dynamic dims = {}", s)});
  int64_t expected_compiles = 1;
  for (size_t k = 0; k < calls.size(); ++k) {
    const Call& call = calls[k];
    std::vector<c10::IValue> eager_in = make_inputs(c, call.dynamic_size, k);
    std::vector<c10::IValue> compiled_in = make_inputs(c, call.dynamic_size, k);
    const std::vector<c10::IValue> oracle_in = make_inputs(c, call.dynamic_size, k);
    std::string inputs_text;
    for (size_t i = 0; i < compiled_in.size(); ++i) {
      inputs_text += fmt::format("\n  x{}: {}", i, describe_tensor(compiled_in[i].toTensor()));
    }
    const std::string where = fmt::format("call {} ({}), inputs:{}\n", k, call.what, inputs_text);
    c10::IValue eager_out;
    try {
      eager_out = compiled.call_eager(eager_in);
    } catch (const std::exception& e) {
      return finish(CaseOutcome::Status::Invalid, fmt::format("eager fails on {}{}", where, e.what()), &compiled);
    }
    std::string no_oracle;
    std::optional<c10::IValue> oracle_out = run_oracle(oracle, oracle_in, &no_oracle);
    c10::IValue compiled_out;
    try {
      compiled_out = compiled.call(compiled_in);
    } catch (const std::exception& e) {
      return finish(CaseOutcome::Status::Error, fmt::format("compiled module fails on {}{}", where, e.what()), &compiled);
    }
    if (options.perturb_compiled_output && k == 1) perturb(compiled_out);
    Comparison cmp = compare_values(compiled_out, eager_out, oracle_out ? &*oracle_out : nullptr, options.tol,
                                    c.output_dependence);
    if (!cmp.ok) return finish(CaseOutcome::Status::Mismatch, where + cmp.problem + no_oracle, &compiled);
    if (cmp.oracle_used) ++out.oracle_used;
    for (size_t i = 0; i < eager_in.size(); ++i) {
      if (!same_tensor(compiled_in[i].toTensor(), eager_in[i].toTensor())) {
        return finish(CaseOutcome::Status::Mismatch,
                      fmt::format("{}input x{} after the compiled call differs from after the eager call", where, i),
                      &compiled);
      }
    }
    ++out.calls;
    // Same sizes never recompile; automatic dynamic recompiles once, at the first size change.
    if (k == 3 && !c.declare_dynamic) expected_compiles = 2;
    if (compiled.stats().compiles > expected_compiles) {
      out.unexpected_recompiles += static_cast<int>(compiled.stats().compiles - expected_compiles);
      expected_compiles = compiled.stats().compiles;
    }
  }
  return finish(CaseOutcome::Status::Pass, "", &compiled);
}

}  // namespace tcprof::fuzz
