#include "bench/fuzz/case_module.h"

#include <sstream>

#include <ATen/ATen.h>
#include <c10/core/DefaultDtype.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>

namespace tcprof::fuzz {

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
  oracle.module = f64_copy(oracle.module);
  return oracle;
}

std::optional<c10::IValue> run_oracle(LoadedModel& oracle, std::vector<c10::IValue> inputs, std::string* why_not) {
  return run_f64(oracle.module, oracle.method, std::move(inputs), why_not);
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
      // GEMMs the autotune phase kept over LibTorch's linear (against its plan, which is LibTorch's
      // op): only those run the prepared weight in the compared calls.
      for (const AutotuneDecision& d : r.autotune) {
        out.linear_gemms += d.against_plan && d.text.find("_linear_gemm") != std::string::npos;
      }
    }
  }
}

}  // namespace tcprof::fuzz
