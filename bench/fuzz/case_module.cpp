#include "bench/fuzz/case_module.h"

#include <sstream>

#include <ATen/ATen.h>
#include <c10/core/DefaultDtype.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>

namespace tcprof::fuzz {

DefaultDtypeDouble::DefaultDtypeDouble() : saved_(c10::get_default_dtype()) {
  c10::set_default_dtype(caffe2::TypeMeta::Make<double>());
}
DefaultDtypeDouble::~DefaultDtypeDouble() { c10::set_default_dtype(saved_); }

// The case as a module archive (parameters, buffers, the compiled source).
void save_module(const FuzzCase& c, const std::string& path) {
  torch::jit::Module m("Fuzz");
  for (const auto& p : c.params) {
    at::Tensor value = make_tensor(p.recipe);
    if (p.buffer) m.register_buffer(p.name, value);
    else m.register_parameter(p.name, value, /*is_buffer=*/false);
  }
  m.define(c.source);
  m.eval();
  m.save(path);
}

// The same module with float parameters and buffers in f64 (Module::to would convert bool and int
// buffers too).
LoadedModel load_oracle(const std::string& path) {
  LoadedModel oracle = load_model(path);
  for (const auto& p : oracle.module.named_parameters()) {
    if (p.value.is_floating_point()) p.value.set_data(p.value.to(at::kDouble));
  }
  for (const auto& b : oracle.module.named_buffers()) {
    if (b.value.is_floating_point()) b.value.set_data(b.value.to(at::kDouble));
  }
  return oracle;
}

// The oracle's result on f64 copies of the inputs, or nothing (with the reason) if f64 changes a
// promotion the source relies on: then the elementwise test alone decides.
std::optional<c10::IValue> run_oracle(LoadedModel& oracle, std::vector<c10::IValue> inputs, std::string* why_not) {
  for (auto& v : inputs) {
    if (at::isFloatingType(v.toTensor().scalar_type())) v = v.toTensor().to(at::kDouble);
  }
  try {
    DefaultDtypeDouble f64_defaults;
    return oracle.module.forward(inputs);
  } catch (const std::exception& e) {
    *why_not = fmt::format("\n(no f64 oracle: {})", e.what());
    return std::nullopt;
  }
}

std::vector<c10::IValue> make_inputs(const FuzzCase& c, int64_t dynamic_size, uint64_t salt) {
  std::vector<c10::IValue> v;
  for (const auto& r : c.inputs) v.emplace_back(make_tensor(r, dynamic_size, salt));
  return v;
}

std::string describe_program(const CompiledModule& m) {
  std::string s;
  for (const auto& frame : m.frames()) {
    for (const auto& entry : frame->entries) {
      const CompileReport& r = entry->compiled->report();
      s += fmt::format("compiled entry {} ({} kernels, {} fused ops, {} extern, {} fallback):\n", entry->compile_label,
                       r.kernels, r.fused_ops, r.extern_calls, r.fallback_calls);
      for (const auto& h : r.hints) s += fmt::format("  hint {}: {} {}\n", h.kind, h.op, h.message);
      s += r.ir + "\n";
    }
  }
  return s;
}

void count_program(const CompiledModule& m, CaseOutcome& out) {
  out.kernels = out.window_kernels = out.fused_ops = out.extern_calls = out.fallback_calls = out.attention_kernels = out.linear_gemms = 0;
  for (const auto& frame : m.frames()) {
    for (const auto& entry : frame->entries) {
      const CompileReport& r = entry->compiled->report();
      out.kernels += r.kernels;
      out.window_kernels += r.window_kernels;
      out.fused_ops += r.fused_ops;
      out.extern_calls += r.extern_calls;
      out.fallback_calls += r.fallback_calls;
      for (const auto& h : r.hints) {
        if (h.kind == "fallback_op") ++out.fallback_ops[h.op];
      }
      for (const auto& k : r.kernel_groups) out.attention_kernels += k.find("attention:") != std::string::npos;
      // GEMMs the autotune phase kept over LibTorch's linear (its IR lines "nK_linear_gemm[_gelu]: ... -> kernel"):
      // only those run the prepared weight in the compared calls.
      std::istringstream ir(r.ir);
      for (std::string line; std::getline(ir, line);) {
        out.linear_gemms += line.find("_linear_gemm") != std::string::npos && line.size() >= 9 &&
                            line.compare(line.size() - 9, 9, "-> kernel") == 0;
      }
    }
  }
}

}  // namespace tcprof::fuzz
