// `tcprof explain MODEL --input ...`: why a compiled model is slow. Runs the model compiled
// (one call by default), then prints every graph break with the user's line and a fix, the
// graphs, the guards that depend on user code, and compile time. The same data is in the run
// database it records.
#include <algorithm>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/break_sites.h"
#include "cli/commands.h"
#include "cli/model_command.h"
#include "cli/text_format.h"
#include "compiler/runtime/compiled_module.h"
#include "core/error.h"

namespace tcprof::cli {
namespace {

using nlohmann::json;

struct ExplainOptions {
  ModelOptions model;
  int64_t iters = 1;
  bool code = false;  // print each graph's generated source
};

// The module's breaks as the store records them, so they group into sites as every reader
// groups them (analysis/break_sites.h).
std::vector<GraphBreakRow> break_rows(const CompiledModule& m) {
  std::vector<GraphBreakRow> rows;
  for (const auto& frame : m.frames()) {
    for (const auto& entry : frame->entries) {
      if (entry->exit.kind != EntryExit::Kind::Break) continue;
      const GraphBreakSite& s = entry->exit.site;
      const BreakInfo& info = break_info(s.cause);
      GraphBreakRow r;
      r.type = std::string(info.type);
      r.break_id = std::string(info.id);
      r.op = s.op;
      r.reason = s.reason;
      r.hint = std::string(info.hint);
      r.file = s.loc.file;
      r.line = s.loc.line;
      r.col = s.loc.col;
      r.source = s.loc.text;
      r.module_path = s.module_path;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

json autotune_json(const std::vector<AutotuneDecision>& decisions) {
  json out = json::array();
  for (const auto& d : decisions) out.push_back({{"decision", d.text}, {"against_plan", d.against_plan}});
  return out;
}

json explain_json(const CompiledModule& m, const ModelSession& s) {
  json graphs = json::array(), breaks = json::array(), guards = json::array();
  int64_t op_count = 0, break_count = 0;
  for (const auto& frame : m.frames()) {
    for (const auto& entry : frame->entries) {
      json ops = json::array();
      for (const auto& op : entry->graph.ops) ops.push_back(op.name);
      op_count += static_cast<int64_t>(entry->graph.op_count());
      const CompileReport& r = entry->compiled->report();
      json hints = json::array();
      for (const auto& h : r.hints) hints.push_back({{"kind", h.kind}, {"op", h.op}, {"message", h.message}, {"file", h.loc.file}, {"line", h.loc.line}});
      json training = nullptr;
      if (r.training) {
        const TrainingReport& t = *r.training;
        training = {{"saved_bytes", t.saved_bytes}, {"saved_inputs", t.saved_inputs},
                    {"saved_activations", t.saved_activations}, {"recomputed_ops", t.recomputed},
                    {"backward_ops", t.backward_ops}, {"gradients", t.gradients},
                    {"forward_kernels", t.forward_kernels}, {"backward_kernels", t.backward_kernels}};
      }
      json layout = nullptr;
      if (r.layout) {
        layout = {{"convolutions", r.layout->convolutions}, {"post_ops", r.layout->post_ops},
                  {"channel_ops", r.layout->channel_ops},
                  {"blocked_values", r.layout->blocked_values}, {"format", r.layout->format},
                  {"winograd", r.layout->winograd},
                  {"reorders", r.layout->reorders}};
      }
      graphs.push_back({{"id", entry->compile_label}, {"frame", frame->name},
                        {"op_count", entry->graph.op_count()}, {"ops", ops},
                        {"kernels", r.kernels + r.window_kernels}, {"unique_kernels", r.unique_kernels},
                        {"fused_ops", r.fused_ops}, {"kernel_groups", r.kernel_groups},
                        {"extern_calls", r.extern_calls}, {"fallback_calls", r.fallback_calls},
                        {"compile_failed", r.compile_failed}, {"cache_hit", r.cache_hit}, {"perf_hints", hints},
                        {"training", training}, {"layout", layout}, {"autotune", autotune_json(r.autotune)}});
      for (const auto& g : entry->guards.guards()) {
        guards.push_back({{"kind", guard_kind_name(g.kind)}, {"expr", g.text}, {"file", g.loc.file},
                          {"line", g.loc.line}, {"graph", entry->compile_label}});
      }
      if (entry->exit.kind != EntryExit::Kind::Break) continue;
      ++break_count;
      const GraphBreakSite& s = entry->exit.site;
      const BreakInfo& info = break_info(s.cause);
      json stack = json::array();
      for (const auto& e : s.stack) {
        stack.push_back({{"module_path", e.module_path}, {"function", e.function}, {"file", e.loc.file},
                         {"line", e.loc.line}, {"source", e.loc.text}});
      }
      breaks.push_back({{"type", info.type}, {"id", info.id}, {"op", s.op}, {"reason", s.reason},
                        {"hint", info.hint}, {"file", s.loc.file}, {"line", s.loc.line},
                        {"column", s.loc.col}, {"source", s.loc.text}, {"module_path", s.module_path},
                        {"stack", stack}, {"graph", entry->compile_label}});
    }
  }
  return {{"graph_count", graphs.size()}, {"graph_break_count", break_count}, {"op_count", op_count},
          {"graphs", graphs}, {"breaks", breaks}, {"guards", guards},
          {"compile_time_ms", static_cast<double>(m.stats().compile_ns) / 1e6},
          {"recompiles", m.stats().recompiles}, {"compile_failures", m.stats().compile_failures},
          {"compile_failure", m.stats().compile_failures > 0 ? json(m.stats().first_compile_failure) : json(nullptr)},
          {"db", s.recording() ? json(s.db_path) : json(nullptr)}};
}

std::string op_summary(const CapturedGraph& g) {
  std::map<std::string, int> counts;
  for (const auto& op : g.ops) ++counts[op.name.substr(op.name.find("::") + 2)];
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [name, n] : counts) sorted.emplace_back(-n, name);
  std::sort(sorted.begin(), sorted.end());
  std::string s;
  for (const auto& [n, name] : sorted) s += fmt::format("{}{} x{}", s.empty() ? "" : ", ", name, -n);
  return s;
}

// A training graph's partition (explain --grad): what the backward keeps from the forward, what it
// computes again, and each pass's kernels.
std::string training_text(const TrainingReport& t) {
  std::map<std::string, int> counts;
  for (const auto& op : t.recomputed) ++counts[op.substr(op.find("::") + 2)];
  std::string recomputed;
  for (const auto& [op, n] : counts) recomputed += fmt::format("{}{} x{}", recomputed.empty() ? "" : ", ", op, n);
  std::string s = fmt::format("        training: forward {} · backward {}, {} ops · {}\n",
                              text::plural(t.forward_kernels, "kernel", "kernels"),
                              text::plural(t.backward_kernels, "kernel", "kernels"), t.backward_ops,
                              text::plural(t.gradients, "gradient", "gradients"));
  s += text::wrap("        saved for backward: ",
                  fmt::format("{} activations ({}) and {} inputs or parameters", t.saved_activations,
                              text::bytes(t.saved_bytes), t.saved_inputs));
  s += text::wrap("        recomputed in backward: ", recomputed.empty() ? std::string("nothing") : recomputed);
  return s;
}

// The layout pass's line: how many convolutions stay in oneDNN's blocked layout, and every place a
// value still changes layout (the first few; --json has them all).
std::string layout_text(const LayoutReport& l) {
  std::string s = text::wrap(
      "        layout: ",
      fmt::format("{} in oneDNN's {} layout · {} fused into them", text::plural(l.convolutions, "convolution", "convolutions"),
                  l.format.empty() ? "plain" : l.format, text::plural(l.post_ops, "op", "ops")) +
          (l.channel_ops > 0 ? fmt::format(" · {} on their layout", text::plural(l.channel_ops, "cat or max pool", "cats and max pools"))
                             : "") +
          fmt::format(" · {} passed between them without a reorder", text::plural(l.blocked_values, "value", "values")) +
          (l.winograd > 0 ? fmt::format(" · {} through Winograd", l.winograd) : ""));
  const size_t shown = 6;
  for (size_t i = 0; i < l.reorders.size() && i < shown; ++i) s += text::wrap("        reorder: ", l.reorders[i]);
  if (l.reorders.size() > shown) s += fmt::format("        and {} more reorders (--json lists them)\n", l.reorders.size() - shown);
  if (l.reorders.empty()) s += "        reorders: none\n";
  return s;
}

// The autotune phase in brief: how many decisions, and those against the plan (a direct kernel
// that lost to LibTorch's op, a chain layout other than oneDNN's) with the margins they won by;
// --json lists every decision.
std::string autotune_text(const std::vector<AutotuneDecision>& decisions) {
  if (decisions.empty()) return "";
  std::vector<const AutotuneDecision*> changed;
  for (const auto& d : decisions) {
    if (d.against_plan) changed.push_back(&d);
  }
  std::string s = fmt::format("        autotune: {}, {} against the plan\n",
                              text::plural(static_cast<int64_t>(decisions.size()), "decision", "decisions"), changed.size());
  const size_t shown = 6;
  for (size_t i = 0; i < changed.size() && i < shown; ++i) s += text::wrap("          ", changed[i]->text);
  if (changed.size() > shown) s += fmt::format("          and {} more (--json lists them)\n", changed.size() - shown);
  return s;
}

std::string explain_text(const CompiledModule& m, const ExplainOptions& o, const ModelSession& s) {
  fmt::memory_buffer out;
  auto w = std::back_inserter(out);
  int64_t graphs = 0, ops = 0;
  for (const auto& frame : m.frames()) {
    for (const auto& entry : frame->entries) {
      ++graphs;
      ops += static_cast<int64_t>(entry->graph.op_count());
    }
  }
  std::vector<GraphBreakRow> rows = break_rows(m);
  auto breaks = static_cast<int64_t>(rows.size());
  std::vector<analysis::BreakSite> sites = analysis::group_break_sites(rows);
  fmt::format_to(w, "tcprof explain {} ({}, {})\n", o.model.model, fmt::join(o.model.inputs, " "),
                 text::plural(o.iters, "call", "calls"));
  fmt::format_to(w, "  {} · {} at {} · {} · compile {}\n",
                 text::plural(graphs, "graph", "graphs"), text::plural(breaks, "graph break", "graph breaks"),
                 text::plural(static_cast<int64_t>(sites.size()), "site", "sites"), text::plural(ops, "op", "ops"),
                 text::duration(static_cast<double>(m.stats().compile_ns)));
  if (m.stats().recompiles > 0) {
    fmt::format_to(w, "  recompiles {} · guard failures {}\n", m.stats().recompiles, m.stats().guard_failures);
  }
  fmt::format_to(w, "{}", compile_failure_text(m.stats()));
  if (!sites.empty()) {
    fmt::format_to(w, "\nGraph breaks\n");
    for (const auto& s : sites) {
      fmt::format_to(w, "{}", text::wrap(fmt::format("  {}x {} {} at ", s.count, s.break_id, s.type),
                                         text::location(s.file, s.line, s.col)));
      if (!s.module_path.empty()) fmt::format_to(w, "{}", text::wrap("     in ", s.module_path));
      if (!s.source.empty()) fmt::format_to(w, "{}", text::wrap("     | ", text::trim(s.source)));
      fmt::format_to(w, "{}", text::wrap("     ", s.reason));
      fmt::format_to(w, "{}", text::wrap("     hint: ", s.hint));
    }
  }
  fmt::format_to(w, "\nGraphs\n");
  for (const auto& frame : m.frames()) {
    for (const auto& entry : frame->entries) {
      fmt::format_to(w, "{}", text::wrap(fmt::format("  {:<5} {:>4} ops  ", entry->compile_label,
                                                     entry->graph.op_count()),
                                         op_summary(entry->graph)));
      fmt::format_to(w, "{}", text::wrap("        ", frame->name));
      const CompileReport& r = entry->compiled->report();
      if (r.compile_failed) {
        fmt::format_to(w, "{}", text::wrap("        compile failed, runs eagerly: ",
                                           r.failure.substr(0, r.failure.find('\n'))));
      } else if (r.kernels + r.window_kernels > 0 || !r.hints.empty() || r.layout || !r.kernel_groups.empty()) {
        // (A graph of oneDNN steps alone, MobileNetV2's, generates no kernel but has its chains.)
        fmt::format_to(w, "        {} ({} unique) · {} ops fused · {} extern · {} fallback\n",
                       text::plural(r.kernels + r.window_kernels, "kernel", "kernels"), r.unique_kernels, r.fused_ops,
                       r.extern_calls, r.fallback_calls);
        if (r.training) fmt::format_to(w, "{}", training_text(*r.training));
        if (r.layout) fmt::format_to(w, "{}", layout_text(*r.layout));
        fmt::format_to(w, "{}", autotune_text(r.autotune));
        // Fusions (multi-op groups), once per op list with how many kernels have it.
        std::vector<std::pair<std::string, int>> fusions;
        for (const auto& g : r.kernel_groups) {
          std::string ops = g.substr(g.find(": ") + 2);
          if (ops.find(',') == std::string::npos) continue;
          // A library call's group says which: "linear_relu (cuBLASLt epilogue): ...".
          const std::string name = g.substr(0, g.find(": "));
          if (name.find(" (") != std::string::npos) ops += name.substr(name.find(" ("));
          auto it = std::find_if(fusions.begin(), fusions.end(), [&](const auto& f) { return f.first == ops; });
          if (it == fusions.end()) fusions.emplace_back(ops, 1);
          else ++it->second;
        }
        for (size_t i = 0; i < fusions.size() && i < 6; ++i) {
          fmt::format_to(w, "{}", text::wrap(fmt::format("          {}x ", fusions[i].second), fusions[i].first));
        }
        std::map<std::string, int> fallbacks;
        for (const auto& h : r.hints) {
          if (h.kind == "fallback_op") ++fallbacks[h.op];
          else fmt::format_to(w, "{}", text::wrap("        perf hint: ", h.message));
        }
        for (const auto& [op, n] : fallbacks) fmt::format_to(w, "        fallback: {}x {}\n", n, op);
      }
      // The cuda backend's IR header, its "# " lines: what NVRTC built and where the kernels ran,
      // whether the graph is replayed as a CUDA graph, then how launch sizes are chosen and the
      // convolutions' layout where measured. A training graph has one per part.
      if (o.model.backend == "cuda" && !r.compile_failed) {
        auto header = [&](size_t first, const std::string& label) {
          for (size_t at = first; at < r.ir.size() && r.ir.compare(at, 2, "# ") == 0;) {
            const size_t end = std::min(r.ir.find('\n', at), r.ir.size());
            const size_t skip = at == first ? 8 : 2;  // "# cuda: " says what the line above says
            const std::string indent(8, ' ');
            fmt::format_to(w, "{}", text::wrap(indent + (at == first ? label : std::string(label.size(), ' ')),
                                               r.ir.substr(at + skip, end - at - skip)));
            at = end + 1;
          }
        };
        if (r.ir.rfind("# cuda: ", 0) == 0) header(0, "");
        for (const std::string part : {"forward", "backward"}) {
          const size_t at = r.training ? r.ir.find("# " + part + "\n# cuda: ") : std::string::npos;
          if (at != std::string::npos) header(at + part.size() + 3, part + ": ");
        }
      }
    }
  }
  std::vector<std::string> user_guards;
  int64_t input_guards = 0;
  for (const auto& frame : m.frames()) {
    for (const auto& entry : frame->entries) {
      for (const auto& g : entry->guards.guards()) {
        if (g.kind == GuardKind::ShapeExpr || g.kind == GuardKind::Attribute) {
          std::string where = g.loc.known() ? text::location(g.loc.file, g.loc.line) : "";
          user_guards.push_back(text::wrap(fmt::format("  {:<5} ", entry->compile_label),
                                           fmt::format("{:<36} {}", g.text, where)));
        } else {
          ++input_guards;
        }
      }
    }
  }
  fmt::format_to(w, "\nGuards\n");
  for (const auto& line : user_guards) fmt::format_to(w, "{}", line);
  fmt::format_to(w, "  and {} on inputs (dtype, device, rank, sizes, strides, requires_grad, grad mode)\n",
                 input_guards);
  // --backend cuda: the CUDA program each graph gets, so that it can be read without a GPU.
  if (o.model.backend == "cuda" || o.code) {
    for (const auto& frame : m.frames()) {
      for (const auto& entry : frame->entries) {
        const CompileReport& r = entry->compiled->report();
        if (r.code.empty()) continue;
        fmt::format_to(w, "\nGenerated {} code of graph {}\n{}", o.model.backend == "cuda" ? "CUDA" : "C++", entry->compile_label, r.code);
      }
    }
  }
  fmt::format_to(w, "\n{}", recorded_line(s));
  return fmt::to_string(out);
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  auto* cmd = app.add_subcommand("explain", "Explain graph breaks, guards and graphs of a TorchScript model");
  add_model_options(cmd, o->model, true);
  cmd->add_option("--iters", o->iters, "Calls to run (with --vary, shows recompiles too)")->capture_default_str();
  cmd->add_flag("--code", o->code, "Print each graph's generated source (always on with --backend cuda)");
  cmd->callback([o] {
    if (o->iters < 1) throw Error(ErrorKind::Usage, "--iters must be at least 1");
    ModelSession s = open_model_session(o->model, "explain", config_json(o->model, fmt::format("{{\"iters\":{}}}", o->iters)));
    CompiledModule m(s.model, s.compile, s.writer.get(), s.profiler.get());
    try {
      for (int64_t i = 0; i < o->iters; ++i) m.call(s.inputs->make(i));
    } catch (const Error& e) {
      fail_session(s, e);
    }
    finish_session(s);
    if (o->model.json) {
      std::cout << explain_json(m, s).dump(2) << "\n";
    } else {
      std::cout << explain_text(m, *o, s);
    }
  });
}

}  // namespace tcprof::cli
