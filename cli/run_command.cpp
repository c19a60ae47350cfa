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
#include "core/clock.h"
#include "core/error.h"

namespace tcprof::cli {
namespace {

struct RunOptions {
  ModelOptions model;
  int64_t iters = 10;
  bool verify = false;
};

// Compares outputs structurally; tensors with a tolerance (the eager backend is exact, compiled
// backends may reorder float arithmetic). Returns a description of the first difference.
std::string compare(const c10::IValue& a, const c10::IValue& b, const std::string& where) {
  if (a.isTensor() && b.isTensor()) {
    const at::Tensor& x = a.toTensor();
    const at::Tensor& y = b.toTensor();
    if (x.sizes() != y.sizes()) {
      return fmt::format("{}: shape [{}] vs [{}]", where, fmt::join(x.sizes(), ","), fmt::join(y.sizes(), ","));
    }
    if (x.scalar_type() != y.scalar_type()) return fmt::format("{}: dtype differs", where);
    if (x.is_floating_point()) {
      if (!at::allclose(x, y, 1e-4, 1e-5, /*equal_nan=*/true)) {
        double diff = (x - y).abs().max().item<double>();
        return fmt::format("{}: values differ (max abs diff {:.3g})", where, diff);
      }
    } else if (!at::equal(x, y)) {
      return fmt::format("{}: values differ", where);
    }
    return {};
  }
  if (a.isTuple() && b.isTuple()) {
    const auto& xs = a.toTupleRef().elements();
    const auto& ys = b.toTupleRef().elements();
    if (xs.size() != ys.size()) return fmt::format("{}: tuple sizes differ", where);
    for (size_t i = 0; i < xs.size(); ++i) {
      auto d = compare(xs[i], ys[i], fmt::format("{}[{}]", where, i));
      if (!d.empty()) return d;
    }
    return {};
  }
  if (a.isList() && b.isList()) {
    auto xs = a.toListRef();
    auto ys = b.toListRef();
    if (xs.size() != ys.size()) return fmt::format("{}: list sizes differ", where);
    for (size_t i = 0; i < xs.size(); ++i) {
      auto d = compare(xs[i], ys[i], fmt::format("{}[{}]", where, i));
      if (!d.empty()) return d;
    }
    return {};
  }
  if (a.isInt() && b.isInt()) return a.toInt() == b.toInt() ? "" : fmt::format("{}: {} vs {}", where, a.toInt(), b.toInt());
  if (a.isDouble() && b.isDouble()) return a.toDouble() == b.toDouble() ? "" : fmt::format("{}: numbers differ", where);
  if (a.isBool() && b.isBool()) return a.toBool() == b.toBool() ? "" : fmt::format("{}: bools differ", where);
  if (a.isNone() && b.isNone()) return {};
  return a.tagKind() == b.tagKind() ? "" : fmt::format("{}: {} vs {}", where, a.tagKind(), b.tagKind());
}

c10::IValue call_reference(torch::jit::Module& module, const std::string& method, std::vector<c10::IValue> inputs) {
  try {
    return module.get_method(method)(std::move(inputs));
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Input, fmt::format("--verify: running {} uncompiled failed: {}", method,
                                              e.what_without_backtrace()));
  }
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
    // += 1`) must see each call once in each, never twice in one.
    std::optional<torch::jit::Module> reference;
    if (o->verify) reference = s.model.module.clone();
    CompiledModule m(s.model, s.compile, s.writer.get(), s.profiler.get());
    ProgressBar bar("run", o->iters);
    std::vector<analysis::CallSample> samples;
    try {
      for (int64_t i = 0; i < o->iters; ++i) {
        auto inputs = s.inputs->make(i);
        int64_t compiles = m.stats().compiles;
        int64_t t0 = now_ns();
        c10::IValue out = m.call(inputs);
        samples.push_back({now_ns() - t0, m.stats().compiles > compiles});
        if (reference) {
          std::string diff = compare(out, call_reference(*reference, s.model.method, s.inputs->make(i)), "output");
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
                          {"verified", o->verify},
                          {"db", s.recording() ? nlohmann::json(s.db_path) : nlohmann::json(nullptr)}};
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::cout << fmt::format("run {}: {} · {} · {} · {}\n", o->model.model, text::plural(st.calls, "call", "calls"),
                             text::plural(st.compiles, "compile", "compiles"),
                             text::plural(st.recompiles, "recompile", "recompiles"),
                             text::plural(st.guard_failures, "guard failure", "guard failures"));
    std::cout << fmt::format("  graph breaks {} · eager calls {} · cache entries {}{}\n", st.graph_breaks,
                             st.eager_calls, st.cache_entries, o->verify ? " · outputs verified" : "");
    std::cout << fmt::format("  {}\n", text::call_timing(timing));
    if (st.compile_failures > 0) std::cout << compile_failure_text(st);
    if (st.recompile_limit_hits > 0) {
      std::cout << fmt::format("  recompile limit ({}) hit: those frames ran eagerly\n", s.compile.recompile_limit);
    }
    std::cout << recorded_line(s);
  });
}

}  // namespace tcprof::cli
