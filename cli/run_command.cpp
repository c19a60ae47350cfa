// `tcprof run MODEL --input ... --iters N`: runs the model compiled, with shapes that may vary per
// call, records everything into the run database and ends with a summary. --verify checks each
// output against an independent, uncompiled copy of the module.
#include <iostream>
#include <optional>

#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/call_timing.h"
#include "cli/commands.h"
#include "cli/model_command.h"
#include "cli/progress.h"
#include "cli/text_format.h"
#include "compiler/runtime/compiled_module.h"
#include "compiler/runtime/output_check.h"
#include "core/clock.h"
#include "core/error.h"

namespace tcprof::cli {
namespace {

struct RunOptions {
  ModelOptions model;
  int64_t iters = 10;
  bool verify = false;
};

c10::IValue call_reference(torch::jit::Module& module, const std::string& method, std::vector<c10::IValue> inputs) {
  try {
    return module.get_method(method)(std::move(inputs));
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Input, fmt::format("--verify: running {} uncompiled failed: {}", method,
                                              e.what_without_backtrace()));
  }
}

// Rounding draws for the verdict (output_check.h), on copies of the reference and the oracle as
// they are after this call: only when running the call again there gives bit for bit what it gave
// (a model that keeps state, `self.calls += 1`, does not, and is then judged without draws).
std::optional<RoundingSamples> rounding_draws(const c10::IValue& expected, const c10::IValue& exact,
                                              torch::jit::Module& reference, torch::jit::Module& oracle,
                                              const std::string& method,
                                              const std::function<std::vector<c10::IValue>()>& make_inputs) {
  try {
    torch::jit::Module ref = reference.clone(), orc = oracle.clone();
    std::string why;
    if (!identical_values(ref.get_method(method)(make_inputs()), expected)) return std::nullopt;
    std::optional<c10::IValue> again = run_f64(orc, method, make_inputs(), &why);
    if (!again || !identical_values(*again, exact)) return std::nullopt;
    RoundingSamples draws;
    for (int d = 1; d <= kRoundingDraws; ++d) {
      std::vector<c10::IValue> in = make_inputs(), oracle_in = make_inputs();
      perturb_by_an_ulp(in, static_cast<uint64_t>(d));
      perturb_by_an_ulp(oracle_in, static_cast<uint64_t>(d));
      draws.eager.push_back(ref.get_method(method)(std::move(in)));
      std::optional<c10::IValue> t = run_f64(orc, method, std::move(oracle_in), &why);
      if (!t) return std::nullopt;
      draws.oracle.push_back(std::move(*t));
    }
    return draws;
  } catch (const std::exception&) {
    return std::nullopt;  // inputs an ulp away that the model rejects: no draws
  }
}

// What differs between a compiled call's output and the uncompiled module's ("" when nothing
// does). Both copies see every call: the f64 one keeps its state in step with the reference's.
std::string verify_call(const c10::IValue& out, torch::jit::Module& reference, torch::jit::Module& oracle,
                        const std::string& method, const std::function<std::vector<c10::IValue>()>& make_inputs) {
  c10::IValue expected = call_reference(reference, method, make_inputs());
  std::string no_oracle;
  std::optional<c10::IValue> exact = run_f64(oracle, method, make_inputs(), &no_oracle);
  auto draws = [&]() -> std::optional<RoundingSamples> {
    if (!exact) return std::nullopt;
    return rounding_draws(expected, *exact, reference, oracle, method, make_inputs);
  };
  Comparison cmp = compare_values(out, expected, exact ? &*exact : nullptr, Tolerance{}, {}, draws);
  return cmp.ok ? "" : cmp.problem + no_oracle;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run a model compiled and record calls, compiles, recompiles and breaks");
  add_model_options(cmd, o->model, true);
  cmd->add_option("--iters,-n", o->iters, "Number of calls")->capture_default_str();
  cmd->add_flag("--verify", o->verify, "Compare every output with the uncompiled module (exit 1 on a mismatch)");
  cmd->callback([o] {
    if (o->iters < 1) throw Error(ErrorKind::Usage, "--iters must be at least 1");
    ModelSession s = open_model_session(
        o->model, "run", config_json(o->model, fmt::format("{{\"iters\":{},\"verify\":{}}}", o->iters, o->verify)));
    // The reference is an independent copy of the module: a model that keeps state (`self.calls
    // += 1`) must see each call once in each, never twice in one. An f32 result that differs from
    // it is judged against a third copy in f64 (compiler/runtime/output_check.h): eager's own f32
    // rounding (a layer norm of a constant row: eager 3e-5 off, tcprof exact) is no mismatch.
    std::optional<torch::jit::Module> reference, oracle;
    if (o->verify) reference = s.model.module.clone(), oracle = f64_copy(s.model.module);
    CompiledModule m(s.model, s.compile, s.writer.get(), s.profiler.get());
    ProgressBar bar("run", o->iters);
    std::vector<analysis::CallSample> samples;
    try {
      for (int64_t i = 0; i < o->iters; ++i) {
        auto inputs = s.inputs->make(i);
        int64_t compiles = m.stats().compiles;
        c10::IValue out = m.call(inputs);
        samples.push_back({m.last_call_ns(), m.stats().compiles > compiles});
        if (reference) {
          std::string diff = verify_call(out, *reference, *oracle, s.model.method, [&] { return s.inputs->make(i); });
          if (!diff.empty()) {
            throw Error(ErrorKind::Check, fmt::format("--verify: call {} differs from the uncompiled module: {}", i, diff));
          }
        }
        bar.update(i + 1, fmt::format("{} recompiles", m.stats().recompiles));
      }
    } catch (const Error& e) {
      bar.finish();
      fail_session(s, e);
    }
    bar.finish();
    finish_session(s);
    const RuntimeStats& st = m.stats();
    // The figures `report` shows for this run, from the calls the run recorded; measured here only
    // when nothing is recorded.
    const analysis::CallTiming timing = s.recording() ? recorded_call_timing(s) : analysis::call_timing(samples);
    // A call that compiles returns what its capture computed (eager's own values): only the other
    // calls check compiled code.
    int64_t checked = 0;
    for (const auto& c : samples) checked += c.compiled ? 0 : 1;
    if (o->model.json) {
      nlohmann::json j = {{"calls", st.calls}, {"compiles", st.compiles}, {"recompiles", st.recompiles},
                          {"guard_failures", st.guard_failures}, {"graph_breaks", st.graph_breaks},
                          {"cache_entries", st.cache_entries}, {"eager_calls", st.eager_calls},
                          {"recompile_limit_hits", st.recompile_limit_hits},
                          {"compile_failures", st.compile_failures},
                          {"compile_failure", st.compile_failures > 0 ? nlohmann::json(st.first_compile_failure)
                                                                      : nlohmann::json(nullptr)},
                          {"ms_per_call", timing.mean_incl_compile_ns / 1e6},
                          {"steady_median_ms_per_call", timing.has_steady() ? nlohmann::json(timing.steady_median_ns / 1e6)
                                                                            : nlohmann::json(nullptr)},
                          {"mean_ms_per_call_incl_compile", timing.mean_incl_compile_ns / 1e6},
                          {"timed_with", m.call_timed_with()},
                          {"verified", o->verify},
                          {"verified_compiled_calls", o->verify ? checked : 0},
                          {"db", s.recording() ? nlohmann::json(s.db_path) : nlohmann::json(nullptr)}};
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::cout << fmt::format("run {}: {} · {} · {} · {}\n", o->model.model, text::plural(st.calls, "call", "calls"),
                             text::plural(st.compiles, "compile", "compiles"),
                             text::plural(st.recompiles, "recompile", "recompiles"),
                             text::plural(st.guard_failures, "guard failure", "guard failures"));
    std::string verified;
    if (o->verify) {
      verified = checked > 0 ? fmt::format(" · outputs verified on {} after compiling", text::plural(checked, "call", "calls"))
                             : " · outputs verified, but every call compiled a graph, and in the call that compiles it a "
                               "graph returns what its capture computed (eager's values)";
    }
    std::cout << fmt::format("  graph breaks {} · eager calls {} · cache entries {}{}\n", st.graph_breaks,
                             st.eager_calls, st.cache_entries, verified);
    std::cout << fmt::format("  {}\n", text::call_timing(timing));
    if (st.compile_failures > 0) std::cout << compile_failure_text(st);
    if (st.recompile_limit_hits > 0) {
      std::cout << fmt::format("  recompile limit ({}) hit: those frames ran eagerly\n", s.compile.recompile_limit);
    }
    std::cout << recorded_line(s);
  });
}

}  // namespace tcprof::cli
