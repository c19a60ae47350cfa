// `tcprof diff A.db B.db`: what changed between two runs. Break sites are matched as the CI gate
// matches them (run_sites.h: a moved line is the same site), frames by their normalised names,
// graphs by compile id ("0/1") and kernels by name; time deltas are listed largest first.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/run_sites.h"
#include "cli/text_format.h"
#include "core/error.h"
#include "core/run_reader.h"

namespace tcprof::cli {
namespace {

using nlohmann::json;

struct DiffOptions {
  std::string a, b;
  std::optional<int64_t> run_a, run_b;
  bool json = false;
  size_t top = 10;
};

struct Side {
  std::string path;
  RunView view;
  RunSummary summary;
};

struct TimeDelta {
  std::string name;
  int64_t a_ns = 0, b_ns = 0;
  int64_t delta() const { return b_ns - a_ns; }
};

struct SiteChange {
  const SiteBreaks* site = nullptr;
  std::string frame;
  int64_t a = 0, b = 0;
};

struct FrameChange {
  std::string key;
  int64_t a_recompiles = 0, b_recompiles = 0, a_failures = 0, b_failures = 0;
};

struct Diff {
  std::vector<SiteChange> added, removed, changed;
  std::vector<FrameChange> frames;
  std::vector<TimeDelta> graphs, kernels;
};

std::vector<SiteChange> sites_of(const RunView& v) {
  std::vector<SiteChange> out;
  for (const auto& f : v.frames) {
    for (const auto& s : f.breaks) {
      auto it = std::find_if(out.begin(), out.end(), [&](const SiteChange& c) { return c.site->key == s.key; });
      if (it == out.end()) {
        out.push_back({&s, f.key, 0, 0});
        it = std::prev(out.end());
      }
      it->a += s.count;
    }
  }
  return out;
}

void sort_by_delta(std::vector<TimeDelta>& v) {
  std::stable_sort(v.begin(), v.end(), [](const TimeDelta& x, const TimeDelta& y) {
    int64_t dx = std::llabs(x.delta()), dy = std::llabs(y.delta());
    return dx != dy ? dx > dy : x.name < y.name;
  });
}

Diff compute(const RunReader& ra, const Side& a, const RunReader& rb, const Side& b) {
  Diff d;
  auto sa = sites_of(a.view), sb = sites_of(b.view);
  for (const auto& s : sb) {
    auto it = std::find_if(sa.begin(), sa.end(), [&](const SiteChange& c) { return c.site->key == s.site->key; });
    if (it == sa.end()) {
      d.added.push_back({s.site, s.frame, 0, s.a});
    } else if (it->a != s.a) {
      d.changed.push_back({s.site, s.frame, it->a, s.a});
    }
  }
  for (const auto& s : sa) {
    bool kept = std::any_of(sb.begin(), sb.end(), [&](const SiteChange& c) { return c.site->key == s.site->key; });
    if (!kept) d.removed.push_back({s.site, s.frame, s.a, 0});
  }
  for (const auto& f : a.view.frames) d.frames.push_back({f.key, f.recompiles, 0, f.guard_failures, 0});
  for (const auto& f : b.view.frames) {
    auto it = std::find_if(d.frames.begin(), d.frames.end(), [&](const FrameChange& c) { return c.key == f.key; });
    if (it == d.frames.end()) {
      d.frames.push_back({f.key, 0, 0, 0, 0});
      it = std::prev(d.frames.end());
    }
    it->b_recompiles = f.recompiles;
    it->b_failures = f.guard_failures;
  }
  // Kernel time per graph, by compile id: the same id names the same graph in both runs.
  auto add_graph_times = [&d](const RunReader& r, Id run, bool into_a) {
    std::map<std::string, int64_t> totals;
    for (const auto& g : r.graph_kernel_times(run)) {
      totals[g.compile_label.empty() ? "(outside graphs)" : g.compile_label] += g.total_ns;
    }
    for (const auto& [label, ns] : totals) {
      auto it = std::find_if(d.graphs.begin(), d.graphs.end(), [&](const TimeDelta& t) { return t.name == label; });
      if (it == d.graphs.end()) {
        d.graphs.push_back({label, 0, 0});
        it = std::prev(d.graphs.end());
      }
      (into_a ? it->a_ns : it->b_ns) = ns;
    }
  };
  add_graph_times(ra, a.view.run_id, true);
  add_graph_times(rb, b.view.run_id, false);
  sort_by_delta(d.graphs);
  for (const auto& k : ra.kernel_stats(a.view.run_id)) d.kernels.push_back({k.name, k.total_ns, 0});
  for (const auto& k : rb.kernel_stats(b.view.run_id)) {
    auto it = std::find_if(d.kernels.begin(), d.kernels.end(), [&](const TimeDelta& t) { return t.name == k.name; });
    if (it == d.kernels.end()) {
      d.kernels.push_back({k.name, 0, k.total_ns});
    } else {
      it->b_ns = k.total_ns;
    }
  }
  sort_by_delta(d.kernels);
  return d;
}

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

void write_sites(fmt::memory_buffer& out, const char* title, char mark, const std::vector<SiteChange>& sites) {
  if (sites.empty()) return;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "\n  {} ({})\n", title, sites.size());
  for (const auto& c : sites) {
    const SiteBreaks& s = *c.site;
    std::string where = text::location(s.file, s.line);
    if (!s.module_path.empty()) where += "  (" + s.module_path + ")";
    std::string counts = mark == '+' ? fmt::format("{}x", c.b)
                         : mark == '-' ? fmt::format("{}x", c.a)
                                       : fmt::format("{}x->{}x", c.a, c.b);
    fmt::format_to(o, "  {} {} {} {}\n      at {}\n", mark, counts, s.break_id, s.type, text::fit(where, 70));
    if (!s.source.empty()) fmt::format_to(o, "      | {}\n", text::fit(s.source, 70));
  }
}

std::string render_text(const Side& a, const Side& b, const Diff& d, size_t top) {
  fmt::memory_buffer out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "tcprof diff\n");
  for (const auto* s : {&a, &b}) {
    fmt::format_to(o, "  {}: run {} · {} {} · {}\n     {}\n", s == &a ? "A" : "B", s->view.run_id,
                   s->view.run.command, text::fit(file_basename(s->view.run.model_path), 30),
                   s->view.run.started_at, s->path);
  }
  const RunSummary &x = a.summary, &y = b.summary;
  fmt::format_to(o, "\n  {:<18} {:>12} {:>12} {:>12} {:>9}\n", "", "A", "B", "delta", "");
  auto count_row = [&](const char* name, int64_t va, int64_t vb) {
    fmt::format_to(o, "  {:<18} {:>12} {:>12} {:>12} {:>9}\n", name, text::count(va), text::count(vb),
                   signed_count(va, vb), relative(static_cast<double>(va), static_cast<double>(vb)));
  };
  auto time_row = [&](const char* name, double va, double vb) {
    fmt::format_to(o, "  {:<18} {:>12} {:>12} {:>12} {:>9}\n", name, text::duration(va), text::duration(vb),
                   signed_duration(vb - va), relative(va, vb));
  };
  count_row("calls", x.calls, y.calls);
  time_row("time per call", x.ms_per_call * 1e6, y.ms_per_call * 1e6);
  time_row("compile time", static_cast<double>(x.compile_time_ns), static_cast<double>(y.compile_time_ns));
  count_row("compiles", x.compiles, y.compiles);
  count_row("recompiles", x.recompiles, y.recompiles);
  count_row("guard failures", x.guard_failures, y.guard_failures);
  count_row("graph breaks", x.graph_breaks, y.graph_breaks);
  count_row("break sites", x.break_sites, y.break_sites);
  count_row("eager calls", x.eager_calls, y.eager_calls);

  write_sites(out, "Graph breaks added", '+', d.added);
  write_sites(out, "Graph breaks removed", '-', d.removed);
  write_sites(out, "Graph breaks more or less often", '~', d.changed);

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
  write_times("Kernel time per graph", d.graphs, 30);
  write_times("Kernel time per kernel", d.kernels, 30);
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
  const SiteBreaks& s = *c.site;
  return {{"type", s.type}, {"id", s.break_id}, {"op", s.op}, {"file", s.file}, {"line", s.line},
          {"source", s.source}, {"module_path", s.module_path}, {"frame", c.frame}, {"count_a", c.a},
          {"count_b", c.b}};
}

json render_json(const Side& a, const Side& b, const Diff& d) {
  auto side = [](const Side& s) {
    const RunSummary& m = s.summary;
    return json{{"db", s.path}, {"run_id", s.view.run_id}, {"model_path", s.view.run.model_path},
                {"calls", m.calls}, {"ms_per_call", m.ms_per_call},
                {"compile_time_ms", static_cast<double>(m.compile_time_ns) / 1e6}, {"compiles", m.compiles},
                {"recompiles", m.recompiles}, {"guard_failures", m.guard_failures},
                {"graph_breaks", m.graph_breaks}, {"break_sites", m.break_sites}, {"eager_calls", m.eager_calls}};
  };
  auto sites = [](const std::vector<SiteChange>& v) {
    json out = json::array();
    for (const auto& c : v) out.push_back(site_json(c));
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
          {"ms_per_call_delta", b.summary.ms_per_call - a.summary.ms_per_call},
          {"compile_time_ms_delta", static_cast<double>(b.summary.compile_time_ns - a.summary.compile_time_ns) / 1e6},
          {"breaks_added", sites(d.added)},
          {"breaks_removed", sites(d.removed)},
          {"breaks_changed", sites(d.changed)},
          {"frames", frames},
          {"graphs", times(d.graphs)},
          {"kernels", times(d.kernels)}};
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
    Side a{o->a, view_run(ra, resolve_run(ra, o->run_a)), {}};
    Side b{o->b, view_run(rb, resolve_run(rb, o->run_b)), {}};
    a.summary = ra.summary(a.view.run_id);
    b.summary = rb.summary(b.view.run_id);
    Diff d = compute(ra, a, rb, b);
    if (o->json) {
      std::cout << render_json(a, b, d).dump(2) << "\n";
    } else {
      std::cout << render_text(a, b, d, o->top);
    }
  });
}

}  // namespace tcprof::cli
