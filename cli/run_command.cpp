// `tcprof run MODEL --input ... --iters N`: runs the model compiled, with shapes that may vary per
// call, records everything into the run database and ends with a summary. --verify checks each
// output against the uncompiled module.
#include <iostream>

#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
    CompiledModule m(s.model, s.compile, s.writer.get(), s.profiler.get());
    ProgressBar bar("run", o->iters);
    int64_t total_ns = 0;
    try {
      for (int64_t i = 0; i < o->iters; ++i) {
        auto inputs = s.inputs->make(i);
        int64_t t0 = now_ns();
        c10::IValue out = m.call(inputs);
        total_ns += now_ns() - t0;
        if (o->verify) {
          std::string diff = compare(out, m.call_eager(s.inputs->make(i)), "output");
          if (!diff.empty()) {
            throw Error(ErrorKind::Check, fmt::format("--verify: call {} differs from the uncompiled module: {}", i, diff));
          }
        }
        bar.update(i + 1, fmt::format("{} recompiles", m.stats().recompiles));
      }
    } catch (const Error& e) {
      bar.finish();
      s.profiler.reset();
      fail_session(s, e);
    }
    bar.finish();
    s.profiler.reset();  // writes what a window still holds before the run closes
    s.writer->close("finished");
    const RuntimeStats& st = m.stats();
    double ms_per_call = static_cast<double>(total_ns) / 1e6 / static_cast<double>(o->iters);
    if (o->model.json) {
      nlohmann::json j = {{"calls", st.calls}, {"compiles", st.compiles}, {"recompiles", st.recompiles},
                          {"guard_failures", st.guard_failures}, {"graph_breaks", st.graph_breaks},
                          {"cache_entries", st.cache_entries}, {"eager_calls", st.eager_calls},
                          {"recompile_limit_hits", st.recompile_limit_hits}, {"ms_per_call", ms_per_call},
                          {"verified", o->verify}, {"db", s.db_path}};
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::cout << fmt::format("run {}: {} · {} · {} · {}\n", o->model.model, text::plural(st.calls, "call", "calls"),
                             text::plural(st.compiles, "compile", "compiles"),
                             text::plural(st.recompiles, "recompile", "recompiles"),
                             text::plural(st.guard_failures, "guard failure", "guard failures"));
    std::cout << fmt::format("  graph breaks {} · eager calls {} · cache entries {} · {}/call{}\n", st.graph_breaks,
                             st.eager_calls, st.cache_entries, text::duration(ms_per_call * 1e6),
                             o->verify ? " · outputs verified" : "");
    if (st.recompile_limit_hits > 0) {
      std::cout << fmt::format("  recompile limit ({}) hit: those frames ran eagerly\n", s.compile.recompile_limit);
    }
    std::cout << fmt::format("Recorded in {} (tcprof report {})\n", s.db_path, s.db_path);
  });
}

}  // namespace tcprof::cli
