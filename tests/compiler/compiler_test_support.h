// Helpers for compiler tests: sample models built by the samples target, compiled modules, and
// comparisons with the uncompiled module.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "compiler/runtime/compiled_module.h"
#include "compiler/runtime/input_generator.h"
#include "compiler/frontend/model_loader.h"

namespace tcprof::testing {

// The cpp backend with --strict: a graph that fails to compile fails the test instead of running
// eagerly.
inline CompileOptions strict_cpp() {
  CompileOptions o;
  o.backend = "cpp";
  o.strict = true;
  return o;
}

// The cuda backend with --strict, for sm_90: a kernel NVRTC or the emulation rejects fails the test.
inline CompileOptions strict_cuda() {
  CompileOptions o;
  o.backend = "cuda";
  o.strict = true;
  o.cuda_arch = "sm_90";
  return o;
}

// A module of `source` (its methods, as TorchScript) saved as `path`, which is returned.
inline std::string save_scripted(const std::string& source, const std::string& path) {
  torch::jit::Module module("Scripted");
  module.define(source);
  module.save(path);
  return path;
}

inline std::string sample(const std::string& name) {
  return std::string(TCPROF_SAMPLES_DIR) + "/" + name + ".pt";
}

inline std::vector<c10::IValue> inputs_for(const std::vector<std::string>& specs, int64_t call = 0,
                                           const std::vector<std::string>& vary = {}) {
  std::vector<InputSpec> parsed;
  for (const auto& s : specs) parsed.push_back(parse_input_spec(s));
  std::vector<VarySpec> v;
  for (const auto& s : vary) v.push_back(parse_vary_spec(s));
  return InputGenerator(parsed, v, 0).make(call);
}

// Outputs must equal the uncompiled module's: exactly for integers and bools, and for floats within
// the documented tolerance of compiled code (docs/backend.md: rtol 1e-4, atol 1e-5 for f32;
// generated kernels may reorder float arithmetic and fold batch norm into convolutions).
inline void expect_same_output(const c10::IValue& compiled, const c10::IValue& eager) {
  if (compiled.isTensor()) {
    ASSERT_TRUE(eager.isTensor());
    const at::Tensor& a = compiled.toTensor();
    const at::Tensor& b = eager.toTensor();
    EXPECT_EQ(a.sizes(), b.sizes());
    ASSERT_EQ(a.scalar_type(), b.scalar_type());
    if (!a.is_floating_point()) {
      EXPECT_TRUE(at::equal(a, b));
      return;
    }
    EXPECT_TRUE(at::allclose(a, b, 1e-4, 1e-5, /*equal_nan=*/true))
        << "max abs diff " << (a - b).abs().max().item<double>();
  } else if (compiled.isTuple()) {
    ASSERT_TRUE(eager.isTuple());
    const auto& a = compiled.toTupleRef().elements();
    const auto& b = eager.toTupleRef().elements();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) expect_same_output(a[i], b[i]);
  } else {
    EXPECT_EQ(compiled.tagKind(), eager.tagKind());
  }
}

// A call that compiles captures its graph by running it, Dynamo-style, and returns what the
// capture computed: eager's own result. Only a later call runs the compiled program, so the call
// compared with eager is the first one after the module stopped compiling for these inputs.
inline void expect_compiled_matches_eager(CompiledModule& m, const std::vector<c10::IValue>& in) {
  c10::IValue out;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const int64_t compiles = m.stats().compiles;
    out = m.call(in);
    if (m.stats().compiles == compiles) break;
  }
  expect_same_output(out, m.call_eager(in));
}

// How often `what` appears in `text` (an op's name in a compile's IR, say).
inline size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// What a module's compiles made, summed over its graphs; every compile must have succeeded.
struct Totals {
  int kernels = 0, unique = 0, fused = 0, native = 0, fallbacks = 0;
  std::string ir, code;
};

inline Totals totals(const CompiledModule& m) {
  Totals t;
  for (const auto& f : m.frames()) {
    for (const auto& e : f->entries) {
      const CompileReport& r = e->compiled->report();
      EXPECT_FALSE(r.compile_failed) << r.failure;
      t.kernels += r.kernels;
      t.unique += r.unique_kernels;
      t.fused += r.fused_ops;
      t.native += r.window_kernels;
      t.fallbacks += r.fallback_calls;
      t.ir += r.ir;
      t.code += r.code;
    }
  }
  return t;
}

// A sample model and its input specs, for tests parameterised over the samples.
struct SampleCase {
  const char* model;
  std::vector<std::string> inputs;
};
inline void PrintTo(const SampleCase& c, std::ostream* os) { *os << c.model; }

struct BreakSummary {
  std::string type, id, file;
  int line = 0;
  std::string module_path;
};

inline std::vector<BreakSummary> breaks_of(const CompiledModule& m) {
  std::vector<BreakSummary> out;
  for (const auto& f : m.frames()) {
    for (const auto& e : f->entries) {
      if (e->exit.kind != EntryExit::Kind::Break) continue;
      const auto& s = e->exit.site;
      const auto& info = break_info(s.cause);
      out.push_back({std::string(info.type), std::string(info.id),
                     s.loc.file.substr(s.loc.file.find_last_of('/') + 1), s.loc.line, s.module_path});
    }
  }
  return out;
}

inline int64_t graph_count(const CompiledModule& m) {
  int64_t n = 0;
  for (const auto& f : m.frames()) n += static_cast<int64_t>(f->entries.size());
  return n;
}

}  // namespace tcprof::testing
