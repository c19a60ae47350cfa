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
#include "compiler/ir/ivalue_tensors.h"

namespace tcprof::fuzz {
namespace {

int64_t first_true(const at::Tensor& flat_mask) { return flat_mask.nonzero().view(-1)[0].item<int64_t>(); }

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


std::vector<c10::IValue> on_device(std::vector<c10::IValue> values, const c10::Device& device) {
  if (device.is_cpu()) return values;
  for (auto& v : values) {
    if (v.isTensor()) v = v.toTensor().to(device);
  }
  return values;
}

c10::IValue on_cpu(const c10::IValue& v) {
  return map_tensors(v, [](const at::Tensor& t) { return t.defined() ? t.cpu() : t; });
}

std::string backend_flags(const CheckOptions& options) {
  return (options.backend == "cpp" ? "" : " --backend " + options.backend) + (options.device == "cpu" ? "" : " --device " + options.device);
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
        out.report += fmt::format("reproduce: fuzz_graphs --case {}{}{}\n", c.seed, c.known_bug_patterns ? "" : " --avoid-known-bugs",
                                  backend_flags(options));
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
  LoadedModel oracle = load_oracle(c, archive);
  const c10::Device device(options.device);
  if (!device.is_cpu()) model.module.to(device);
  CompileOptions compile;
  compile.backend = options.backend;
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
    std::vector<c10::IValue> eager_in = on_device(make_inputs(c, call.dynamic_size, k), device);
    std::vector<c10::IValue> compiled_in = on_device(make_inputs(c, call.dynamic_size, k), device);
    const std::vector<c10::IValue> oracle_in = make_inputs(c, call.dynamic_size, k);
    std::string inputs_text;
    for (size_t i = 0; i < compiled_in.size(); ++i) {
      inputs_text += fmt::format("\n  x{}: {}", i, describe_tensor(compiled_in[i].toTensor()));
    }
    const std::string where = fmt::format("call {} ({}), inputs:{}\n", k, call.what, inputs_text);
    c10::IValue eager_out;
    try {
      eager_out = on_cpu(compiled.call_eager(eager_in));
    } catch (const std::exception& e) {
      return finish(CaseOutcome::Status::Invalid, fmt::format("eager fails on {}{}", where, e.what()), &compiled);
    }
    std::string no_oracle;
    std::optional<c10::IValue> oracle_out = run_oracle(oracle, oracle_in, &no_oracle);
    c10::IValue compiled_out;
    try {
      compiled_out = on_cpu(compiled.call(compiled_in));
    } catch (const std::exception& e) {
      return finish(CaseOutcome::Status::Error, fmt::format("compiled module fails on {}{}", where, e.what()), &compiled);
    }
    if (options.perturb_compiled_output && k == 1) perturb(compiled_out);
    // Eager and the oracle again on inputs an ulp or two away, only if the oracle rule rejects an
    // output (output_check.h): how far rounding alone moves eager's error and the exact value.
    auto rounding_draws = [&]() -> std::optional<RoundingSamples> {
      RoundingSamples draws;
      for (int d = 0; d < kRoundingDraws; ++d) {
        const uint64_t seed = c.seed * 1000003 + k * 101 + static_cast<uint64_t>(d) + 1;
        std::vector<c10::IValue> in = make_inputs(c, call.dynamic_size, k), oracle_draw_in = make_inputs(c, call.dynamic_size, k);
        perturb_by_an_ulp(in, seed);
        in = on_device(std::move(in), device);
        perturb_by_an_ulp(oracle_draw_in, seed);
        std::string why;
        std::optional<c10::IValue> t = run_oracle(oracle, oracle_draw_in, &why);
        if (!t) return std::nullopt;
        try {
          draws.eager.push_back(on_cpu(compiled.call_eager(in)));
        } catch (const std::exception&) {
          return std::nullopt;
        }
        draws.oracle.push_back(std::move(*t));
      }
      return draws;
    };
    Comparison cmp = compare_values(compiled_out, eager_out, oracle_out ? &*oracle_out : nullptr, options.tol,
                                    c.output_dependence, rounding_draws);
    if (!cmp.ok) return finish(CaseOutcome::Status::Mismatch, where + cmp.problem + no_oracle, &compiled);
    if (cmp.oracle_used) ++out.oracle_used;
    if (cmp.samples_used) ++out.rounding_draws_used;
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
