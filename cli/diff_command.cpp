// `tcprof diff A.db B.db`: what changed between two runs (analysis/run_comparison.h, the same
// computation as the GUI's Compare view), as text or JSON.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "analysis/run_comparison.h"
#include "cli/text_format.h"
#include "core/error.h"
#include "core/run_reader.h"

namespace tcprof::cli {
namespace {

using nlohmann::json;
using namespace tcprof::analysis;

struct DiffOptions {
  std::string a, b;
  std::optional<int64_t> run_a, run_b;
  bool json = false;
  size_t top = 10;
};

struct Side {
  std::string path;
  analysis::ComparedRun run;
};

std::string signed_duration(double ns) {
  if (ns == 0) return "0";
  return (ns > 0 ? "+" : "-") + text::duration(std::fabs(ns));
}

std::string relative(double a, double b) {
  if (a == b) return "";
  if (a == 0) return "new";
  return fmt::format("{:+.1f}%", 100.0 * (b - a) / a);
}

std::string signed_count(int64_t a, int64_t b) { return b == a ? "" : fmt::format("{:+d}", b - a); }

void write_sites(fmt::memory_buffer& out, const char* title, char mark, const std::vector<const SiteChange*>& sites) {
  if (sites.empty()) return;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "\n  {} ({})\n", title, sites.size());
  for (const SiteChange* change : sites) {
    const SiteChange& c = *change;
    const BreakSite& s = c.site;
    std::string where = text::location(s.file, s.line);
    if (!s.module_path.empty()) where += "  (" + s.module_path + ")";
    std::string counts = mark == '+' ? fmt::format("{}x", c.b)
                         : mark == '-' ? fmt::format("{}x", c.a)
                                       : fmt::format("{}x->{}x", c.a, c.b);
    fmt::format_to(o, "  {} {} {} {}\n", mark, counts, s.break_id, s.type);
    fmt::format_to(o, "{}", text::wrap("      at ", where));
    if (!s.source.empty()) fmt::format_to(o, "{}", text::wrap("      | ", normalise_source(s.source)));
  }
}

std::string render_text(const Side& a, const Side& b, const RunComparison& d, size_t top) {
  fmt::memory_buffer out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "tcprof diff\n");
  for (const auto* s : {&a, &b}) {
    const RunView& v = s->run.view;
    fmt::format_to(o, "  {}: run {} · {} {} · {}\n     {}\n", s == &a ? "A" : "B", v.run_id, v.run.command,
                   text::fit(file_basename(v.run.model_path), 30), v.run.started_at, s->path);
  }
  const RunCounts &x = a.run.summary.counts, &y = b.run.summary.counts;
  fmt::format_to(o, "\n  {:<18} {:>12} {:>12} {:>12} {:>9}\n", "", "A", "B", "delta", "");
  auto count_row = [&](const char* name, int64_t va, int64_t vb) {
    fmt::format_to(o, "  {:<18} {:>12} {:>12} {:>12} {:>9}\n", name, text::count(va), text::count(vb),
                   signed_count(va, vb), relative(static_cast<double>(va), static_cast<double>(vb)));
  };
  auto time_row = [&](const char* name, double va, double vb) {
    fmt::format_to(o, "  {:<18} {:>12} {:>12} {:>12} {:>9}\n", name, text::duration(va), text::duration(vb),
                   signed_duration(vb - va), relative(va, vb));
  };
  // A run without calls (an import without a profiler trace) has no call time, not a time of 0.
  auto call_time_row = [&](const char* name, double va, double vb) {
    if (x.calls > 0 && y.calls > 0) return time_row(name, va, vb);
    fmt::format_to(o, "  {:<18} {:>12} {:>12} {:>12} {:>9}\n", name, x.calls > 0 ? text::duration(va) : "-",
                   y.calls > 0 ? text::duration(vb) : "-", "", "");
  };
  count_row("calls", x.calls, y.calls);
  const analysis::CallTiming &ta = a.run.summary.call_timing, &tb = b.run.summary.call_timing;
  call_time_row("steady median/call", ta.steady_median_ns, tb.steady_median_ns);
  call_time_row("mean incl. compile", ta.mean_incl_compile_ns, tb.mean_incl_compile_ns);
  const CompileTimeReport &ca = a.run.compile_time, &cb = b.run.compile_time;
  time_row("compile time", static_cast<double>(ca.total_ns), static_cast<double>(cb.total_ns));
  count_row("compiles", x.compiles, y.compiles);
  count_row("recompiles", x.recompiles, y.recompiles);
  count_row("guard failures", x.guard_failures, y.guard_failures);
  count_row("graph breaks", x.graph_breaks, y.graph_breaks);
  count_row("break sites", a.run.summary.break_sites, b.run.summary.break_sites);
  count_row("eager calls", x.eager_calls, y.eager_calls);

  write_sites(out, "Graph breaks added", '+', d.of_kind(SiteChange::Kind::Added));
  write_sites(out, "Graph breaks removed", '-', d.of_kind(SiteChange::Kind::Removed));
  write_sites(out, "Graph breaks more or less often", '~', d.of_kind(SiteChange::Kind::Changed));

  bool frame_changes = std::any_of(d.frames.begin(), d.frames.end(), [](const FrameChange& f) {
    return f.a_recompiles || f.b_recompiles || f.a_failures || f.b_failures;
  });
  if (frame_changes) {
    fmt::format_to(o, "\n  {:<44} {:>15} {:>15}\n", "Recompiles per frame", "recompiles", "guard failures");
    for (const auto& f : d.frames) {
      if (!f.a_recompiles && !f.b_recompiles && !f.a_failures && !f.b_failures) continue;
      fmt::format_to(o, "  {:<44} {:>15} {:>15}\n", text::fit(f.key, 44),
                     fmt::format("{} -> {}", f.a_recompiles, f.b_recompiles),
                     fmt::format("{} -> {}", f.a_failures, f.b_failures));
    }
  }
  if (ca.total_ns > 0 || cb.total_ns > 0) {
    fmt::format_to(o, "\n  {:<18} {:>12} {:>12} {:>12} {:>9}\n", "Compile time", "A", "B", "delta", "");
    for (const auto& st : d.compile_stages) {
      if (st.a_ns == 0 && st.b_ns == 0) continue;
      time_row(st.name.c_str(), static_cast<double>(st.a_ns), static_cast<double>(st.b_ns));
    }
    if (d.a_cache.any() || d.b_cache.any()) {
      count_row("FX cache hits", d.a_cache.fx_hits, d.b_cache.fx_hits);
      count_row("FX cache misses", d.a_cache.fx_misses, d.b_cache.fx_misses);
      count_row("AOT cache hits", d.a_cache.aot_hits, d.b_cache.aot_hits);
      count_row("AOT cache misses", d.a_cache.aot_misses, d.b_cache.aot_misses);
    }
    if (d.compile_frames.size() > 1) {
      fmt::format_to(o, "\n  Compile time per frame (largest change first)\n");
      fmt::format_to(o, "    {:>10} {:>10} {:>11} {:>8} {:>9}  {}\n", "A", "B", "delta", "", "compiles", "");
      for (size_t i = 0; i < std::min(top, d.compile_frames.size()); ++i) {
        const auto& t = d.compile_frames[i];
        fmt::format_to(o, "    {:>10} {:>10} {:>11} {:>8} {:>9}  {}\n", text::duration(static_cast<double>(t.a_ns)),
                       text::duration(static_cast<double>(t.b_ns)), signed_duration(static_cast<double>(t.delta())),
                       relative(static_cast<double>(t.a_ns), static_cast<double>(t.b_ns)),
                       fmt::format("{}->{}", t.a_count, t.b_count), text::fit(t.name, 40));
      }
      if (d.compile_frames.size() > top) fmt::format_to(o, "    … {} more\n", d.compile_frames.size() - top);
    }
  }
  auto write_times = [&](const char* title, const std::vector<TimeDelta>& rows, size_t width) {
    if (rows.empty()) return;
    fmt::format_to(o, "\n  {} (largest change first)\n", title);
    fmt::format_to(o, "    {:>10} {:>10} {:>11} {:>8}  {}\n", "A", "B", "delta", "", "");
    for (size_t i = 0; i < std::min(top, rows.size()); ++i) {
      const auto& t = rows[i];
      fmt::format_to(o, "    {:>10} {:>10} {:>11} {:>8}  {}\n", text::duration(static_cast<double>(t.a_ns)),
                     text::duration(static_cast<double>(t.b_ns)), signed_duration(static_cast<double>(t.delta())),
                     relative(static_cast<double>(t.a_ns), static_cast<double>(t.b_ns)), text::fit(t.name, width));
    }
    if (rows.size() > top) fmt::format_to(o, "    … {} more\n", rows.size() - top);
  };
  // The name column takes what the terminal leaves after the four time columns (48).
  const size_t name_width = std::max<size_t>(30, text::terminal_width() - 48);
  if (!d.kernel_caveat.empty() && (!d.graphs.empty() || !d.kernels.empty())) {
    fmt::format_to(o, "\n{}", text::wrap("  note: ", d.kernel_caveat));
  }
  write_times("Kernel time per graph", d.graphs, name_width);
  write_times("Kernel time per kernel", d.kernels, name_width);
  // Empty trailing cells leave spaces that diff tools and editors flag.
  std::string text = fmt::to_string(out), trimmed;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    line.erase(line.find_last_not_of(' ') + 1);
    trimmed += line + "\n";
    start = end + 1;
  }
  return trimmed;
}

json site_json(const SiteChange& c) {
  const BreakSite& s = c.site;
  return {{"type", s.type}, {"id", s.break_id}, {"op", s.op}, {"file", s.file}, {"line", s.line},
          {"source", normalise_source(s.source)}, {"module_path", s.module_path}, {"frame", c.frame}, {"count_a", c.a},
          {"count_b", c.b}};
}

json compile_time_json(const RunComparison& d) {
  json stages = json::array(), frames = json::array();
  for (const auto& t : d.compile_stages) {
    stages.push_back({{"stage", t.name}, {"a_ns", t.a_ns}, {"b_ns", t.b_ns}, {"delta_ns", t.delta()}});
  }
  for (const auto& t : d.compile_frames) {
    frames.push_back({{"frame", t.name}, {"a_ns", t.a_ns}, {"b_ns", t.b_ns}, {"delta_ns", t.delta()},
                      {"compiles_a", t.a_count}, {"compiles_b", t.b_count}});
  }
  auto cache = [](const CacheCounts& c) {
    return json{{"fx_hits", c.fx_hits}, {"fx_misses", c.fx_misses}, {"aot_hits", c.aot_hits}, {"aot_misses", c.aot_misses}};
  };
  return {{"stages", stages}, {"frames", frames}, {"cache_a", cache(d.a_cache)}, {"cache_b", cache(d.b_cache)}};
}

json render_json(const Side& a, const Side& b, const RunComparison& d) {
  auto side = [](const Side& s) {
    const RunSummary& m = s.run.summary;
    const RunCounts& c = m.counts;
    return json{{"db", s.path}, {"run_id", s.run.view.run_id}, {"model_path", s.run.view.run.model_path},
                {"calls", c.calls}, {"ms_per_call", m.ms_per_call},
                {"steady_median_ms_per_call", m.call_timing.steady_median_ns / 1e6},
                {"mean_ms_per_call_incl_compile", m.call_timing.mean_incl_compile_ns / 1e6},
                {"compile_time_ms", static_cast<double>(s.run.compile_time.total_ns) / 1e6}, {"compiles", c.compiles},
                {"recompiles", c.recompiles}, {"guard_failures", c.guard_failures},
                {"graph_breaks", c.graph_breaks}, {"break_sites", m.break_sites}, {"eager_calls", c.eager_calls}};
  };
  auto sites = [&d](SiteChange::Kind kind) {
    json out = json::array();
    for (const SiteChange* c : d.of_kind(kind)) out.push_back(site_json(*c));
    return out;
  };
  auto times = [](const std::vector<TimeDelta>& v) {
    json out = json::array();
    for (const auto& t : v) out.push_back({{"name", t.name}, {"a_ns", t.a_ns}, {"b_ns", t.b_ns}, {"delta_ns", t.delta()}});
    return out;
  };
  json frames = json::array();
  for (const auto& f : d.frames) {
    frames.push_back({{"frame", f.key}, {"recompiles_a", f.a_recompiles}, {"recompiles_b", f.b_recompiles},
                      {"guard_failures_a", f.a_failures}, {"guard_failures_b", f.b_failures}});
  }
  return {{"a", side(a)},
          {"b", side(b)},
          {"ms_per_call_delta", b.run.summary.ms_per_call - a.run.summary.ms_per_call},
          {"compile_time_ms_delta", static_cast<double>(b.run.compile_time.total_ns - a.run.compile_time.total_ns) / 1e6},
          {"compile_time", compile_time_json(d)},
          {"breaks_added", sites(SiteChange::Kind::Added)},
          {"breaks_removed", sites(SiteChange::Kind::Removed)},
          {"breaks_changed", sites(SiteChange::Kind::Changed)},
          {"frames", frames},
          {"graphs", times(d.graphs)},
          {"kernels", times(d.kernels)},
          {"kernel_caveat", d.kernel_caveat}};
}

}  // namespace

void add_diff_command(CLI::App& app) {
  auto o = std::make_shared<DiffOptions>();
  auto* cmd = app.add_subcommand("diff", "Compare two recorded runs: breaks, recompiles, compile and kernel time");
  cmd->add_option("a", o->a, "Database of the first run (A)")->required();
  cmd->add_option("b", o->b, "Database of the second run (B); may be the same file with --run-b")->required();
  cmd->add_option("--run-a", o->run_a, "Run id in A (default: the newest)");
  cmd->add_option("--run-b", o->run_b, "Run id in B (default: the newest)");
  cmd->add_option("--top", o->top, "Rows per time table")->capture_default_str();
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] {
    RunReader ra(o->a), rb(o->b);
    Side a{o->a, compared_run(ra, resolve_run(ra, o->run_a))};
    Side b{o->b, compared_run(rb, resolve_run(rb, o->run_b))};
    RunComparison d = compare_runs(a.run, b.run);
    if (o->json) {
      std::cout << render_json(a, b, d).dump(2) << "\n";
    } else {
      std::cout << render_text(a, b, d, o->top);
    }
  });
}

}  // namespace tcprof::cli
