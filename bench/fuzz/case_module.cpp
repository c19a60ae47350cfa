#include "bench/fuzz/case_module.h"

#include <filesystem>
#include <sstream>

#include <ATen/ATen.h>
#include <c10/core/DefaultDtype.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>

namespace tcprof::fuzz {

namespace {

void save_source(const FuzzCase& c, const std::string& source, const std::string& path) {
  torch::jit::Module m("Fuzz");
  for (const auto& p : c.params) {
    at::Tensor value = make_tensor(p.recipe);
    if (p.buffer) m.register_buffer(p.name, value);
    else m.register_parameter(p.name, value, /*is_buffer=*/false);
  }
  m.define(source);
  m.eval();
  m.save(path);
}

// Eval-mode batch norm as its formula, for the oracle: LibTorch's CPU batch-norm backward is wrong
// for some strided inputs (a transposed [1, 5, 1, 33], fuzz case 274256469643360, 1.13 and 2.15
// alike; tests/compiler CompiledTraining.BatchNormOfATransposedValue...), and an oracle that
// shares eager's mistake takes eager's side against a compiled rule that is right.
constexpr const char* kBatchNormCall = "torch.batch_norm(";
constexpr const char* kOracleBatchNorm = R"(
def oracle_batch_norm(self, x: Tensor, w: Optional[Tensor], b: Optional[Tensor], mean: Optional[Tensor],
                      var: Optional[Tensor], training: bool, momentum: float, eps: float, cudnn: bool) -> Tensor:
    assert mean is not None and var is not None and not training
    shape = [1, x.size(1)]
    for _ in range(x.dim() - 2):
        shape.append(1)
    y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + eps)
    if w is not None:
        y = y * w.view(shape)
    if b is not None:
        y = y + b.view(shape)
    return y
)";

std::string oracle_source(const std::string& source) {
  std::string s = source;
  const std::string call = kBatchNormCall, formula = "self.oracle_batch_norm(";
  for (size_t at = s.find(call); at != std::string::npos; at = s.find(call, at + formula.size())) {
    s.replace(at, call.size(), formula);
  }
  return s + kOracleBatchNorm;
}

}  // namespace

// The case as a module archive (parameters, buffers, the compiled source).
void save_module(const FuzzCase& c, const std::string& path) { save_source(c, c.source, path); }

// The same module with float parameters and buffers in f64 (Module::to would convert bool and int
// buffers too), and batch norm computed by its formula.
LoadedModel load_oracle(const FuzzCase& c, const std::string& archive) {
  auto load_with_formulas = [&] {
    const std::string path = archive + ".oracle.pt";
    save_source(c, oracle_source(c.source), path);
    LoadedModel m = load_model(path);
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return m;
  };
  LoadedModel oracle = c.source.find(kBatchNormCall) == std::string::npos ? load_model(archive) : load_with_formulas();
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
  out.kernels = out.window_kernels = out.fused_ops = out.extern_calls = out.fallback_calls = out.attention_kernels = out.linear_gemms = out.onednn_gemms = out.linear_epilogues = out.conv_epilogues = 0;
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
      for (const auto& k : r.kernel_groups) {
        out.attention_kernels += k.find("attention:") != std::string::npos;
        out.linear_epilogues += k.find("(cuBLASLt epilogue):") != std::string::npos;
        out.conv_epilogues += k.find("(cuDNN epilogue):") != std::string::npos;
      }
      // GEMMs the autotune phase kept over LibTorch's linear (against its plan, which is LibTorch's
      // op): only those run the prepared weight in the compared calls.
      for (const AutotuneDecision& d : r.autotune) {
        out.linear_gemms += d.against_plan && d.text.find("_linear_gemm") != std::string::npos;
        out.onednn_gemms += d.against_plan && d.text.find("_onednn") != std::string::npos;
      }
    }
  }
}

}  // namespace tcprof::fuzz
