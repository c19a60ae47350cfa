#include "analysis/gate.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "analysis/recompiles.h"

namespace tcprof::analysis {
namespace {

// Breaks per site over the whole run, in first-seen order.
struct SiteTotal {
  const BreakSite* site = nullptr;  // first occurrence
  std::string frame;
  int64_t count = 0;
};
using SiteTotals = std::vector<std::pair<std::string, SiteTotal>>;

// Break sites are matched across the whole run, not per frame: a break added early in forward
// moves later breaks into a new resume frame, and that alone must not read as new breaks.
SiteTotals site_totals(const std::vector<FrameView>& frames) {
  SiteTotals out;
  for (const auto& f : frames) {
    for (const auto& s : f.breaks) {
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == s.key; });
      if (it == out.end()) {
        out.push_back({s.key, SiteTotal{&s, f.key, 0}});
        it = std::prev(out.end());
      }
      it->second.count += s.count;
    }
  }
  return out;
}

const SiteTotal* find_site(const SiteTotals& totals, const std::string& key) {
  for (const auto& [k, t] : totals) {
    if (k == key) return &t;
  }
  return nullptr;
}

const FrameView* find_frame(const std::vector<FrameView>& frames, const std::string& key) {
  for (const auto& f : frames) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

Finding break_finding(const std::string& kind, bool regression, const std::string& what, const SiteTotal& t,
                      int64_t baseline, int64_t current) {
  Finding f;
  f.kind = kind;
  f.regression = regression;
  f.frame = t.frame;
  f.title = fmt::format("{} {} {}", what, t.site->break_id, t.site->type);
  f.file = t.site->file;
  f.line = t.site->line;
  f.source = normalise_source(t.site->source);
  f.reason = t.site->reason;
  f.hint = t.site->hint;
  if (!t.site->module_path.empty()) f.reason += fmt::format(" (in {})", t.site->module_path);
  f.baseline = baseline;
  f.current = current;
  return f;
}

// The text of a guard's line: from the run's recorded sources; a run recorded before sources were
// stored falls back to the file on this disk, when it is here to read.
std::string guard_source(const SourceIndex& sources, const std::string& path, int line) {
  if (!sources.empty()) return normalise_source(sources.line(path, line));
  std::ifstream in(path);
  std::string text;
  for (int n = 1; n <= line && std::getline(in, text); ++n) {
    if (n == line) return normalise_source(text);
  }
  return "";
}

// Where a recompile comes from: the first failed guard that points at user code, else the frame.
void locate_recompile(Finding& f, const FrameView& frame, size_t first_extra, const SourceIndex& sources) {
  if (first_extra < frame.recompile_rows.size()) {
    RecompileCause cause = recompile_cause(frame.recompile_rows[first_extra]);
    if (!cause.file.empty()) {
      f.file = cause.file;
      f.line = cause.line;
      f.source = guard_source(sources, cause.file, cause.line);
    }
    f.reason = cause.reason;
  }
  if (f.file.empty() && !frame.file.empty()) {
    f.file = frame.file;
    f.line = frame.line;
  }
  f.hint = "a guard failed on a new input (usually a size): mark the dimension dynamic "
           "(--dynamic I:D) or pad inputs to fewer sizes; `tcprof report` shows shape advice";
}

GateFrame gate_frame(const std::string& key, const FrameView* run, const FrameView* base) {
  GateFrame g;
  g.key = key;
  if (run) {
    g.in_run = true;
    g.graphs = run->graphs;
    g.breaks = run->break_count();
    g.recompiles = run->recompiles;
    g.eager_fallbacks = run->eager_fallbacks;
  }
  if (base) {
    g.in_baseline = true;
    g.base_graphs = base->graphs;
    g.base_breaks = base->break_count();
    g.base_recompiles = base->recompiles;
    g.base_eager_fallbacks = base->eager_fallbacks;
  }
  return g;
}

// The run's frames in order, then frames only the baseline had.
std::vector<GateFrame> frame_table(const RunView& run, const std::vector<FrameView>& base_frames) {
  std::vector<GateFrame> out;
  for (const auto& f : run.frames) out.push_back(gate_frame(f.key, &f, find_frame(base_frames, f.key)));
  for (const auto& b : base_frames) {
    if (!find_frame(run.frames, b.key)) out.push_back(gate_frame(b.key, nullptr, &b));
  }
  return out;
}

struct Findings {
  std::vector<Finding> regressions, improvements;
  void add(Finding f) { (f.regression ? regressions : improvements).push_back(std::move(f)); }
};

void compare_break_sites(const RunView& run, const Baseline& baseline, Findings& out) {
  auto run_sites = site_totals(run.frames);
  auto base_sites = site_totals(baseline.frames);
  for (const auto& [key, now] : run_sites) {
    const SiteTotal* before = find_site(base_sites, key);
    if (!before) {
      out.add(break_finding("new_graph_break", true, "new graph break", now, 0, now.count));
    } else if (now.count > before->count) {
      out.add(break_finding("more_graph_breaks", true, "more graph breaks at", now, before->count, now.count));
    } else if (now.count < before->count) {
      out.add(break_finding("fewer_graph_breaks", false, "fewer graph breaks at", now, before->count, now.count));
    }
  }
  for (const auto& [key, before] : base_sites) {
    if (find_site(run_sites, key)) continue;
    out.add(break_finding("removed_graph_break", false, "graph break removed:", before, before.count, 0));
  }
}

Finding recompile_change(const FrameView& f, int64_t base_recompiles, const SourceIndex& sources) {
  Finding x;
  bool more = f.recompiles > base_recompiles;
  x.kind = more ? "more_recompiles" : "fewer_recompiles";
  x.regression = more;
  x.frame = f.key;
  x.title = fmt::format("{} recompiles in {}", more ? "more" : "fewer", f.key);
  x.baseline = base_recompiles;
  x.current = f.recompiles;
  if (more) {
    locate_recompile(x, f, static_cast<size_t>(base_recompiles), sources);
  } else {
    x.reason = fmt::format("{} recompiles instead of {}", f.recompiles, base_recompiles);
  }
  return x;
}

Finding eager_change(const RunView& run, const FrameView& f, int64_t base_eager) {
  Finding x;
  bool more = f.eager_fallbacks > base_eager;
  x.kind = more ? "more_eager_fallbacks" : "fewer_eager_fallbacks";
  x.regression = more;
  x.frame = f.key;
  x.title = fmt::format("{} eager fallbacks in {}", more ? "more" : "fewer", f.key);
  x.baseline = base_eager;
  x.current = f.eager_fallbacks;
  x.file = f.file;
  x.line = f.line;
  x.reason = fmt::format("{} calls ran eagerly instead of {}", f.eager_fallbacks, base_eager);
  if (more && !run.limit_hints.empty()) x.reason = run.limit_hints.front().message;
  if (more) {
    x.hint = "frames past --recompile-limit (or under an eager stance) run uncompiled: reduce "
             "distinct input shapes, mark dimensions dynamic or raise the limit";
  }
  return x;
}

Finding vanished_frame(const FrameView& b, const char* what, int64_t count) {
  Finding x;
  x.kind = fmt::format("fewer_{}", what);
  x.frame = b.key;
  std::string words = x.kind.substr(6);
  std::replace(words.begin(), words.end(), '_', ' ');
  x.title = fmt::format("fewer {} in {}", words, b.key);
  x.reason = fmt::format("the frame is gone; it had {} {}", count, words);
  x.baseline = count;
  return x;
}

void compare_frames(const RunView& run, const Baseline& baseline, const SourceIndex& sources, Findings& out) {
  for (const auto& f : run.frames) {
    const FrameView* b = find_frame(baseline.frames, f.key);
    int64_t base_recompiles = b ? b->recompiles : 0;
    int64_t base_eager = b ? b->eager_fallbacks : 0;
    if (f.recompiles != base_recompiles) out.add(recompile_change(f, base_recompiles, sources));
    if (f.eager_fallbacks != base_eager) out.add(eager_change(run, f, base_eager));
  }
  for (const auto& b : baseline.frames) {
    if (find_frame(run.frames, b.key)) continue;
    if (b.recompiles > 0) out.add(vanished_frame(b, "recompiles", b.recompiles));
    if (b.eager_fallbacks > 0) out.add(vanished_frame(b, "eager_fallbacks", b.eager_fallbacks));
  }
}

void check_limits(const RunView& run, const GateLimits& limits, const SourceIndex& sources, Findings& out) {
  int64_t total_breaks = 0, total_recompiles = 0;
  for (const auto& f : run.frames) {
    total_breaks += f.break_count();
    total_recompiles += f.recompiles;
  }
  if (limits.max_graph_breaks && total_breaks > *limits.max_graph_breaks) {
    Finding x;
    x.kind = "max_graph_breaks";
    x.regression = true;
    x.title = fmt::format("{} graph breaks, more than --max-graph-breaks {}", total_breaks, *limits.max_graph_breaks);
    x.baseline = *limits.max_graph_breaks;
    x.current = total_breaks;
    auto sites = site_totals(run.frames);
    auto worst = std::max_element(sites.begin(), sites.end(),
                                  [](const auto& a, const auto& b) { return a.second.count < b.second.count; });
    if (worst != sites.end()) {
      const BreakSite& s = *worst->second.site;
      x.frame = worst->second.frame;
      x.file = s.file;
      x.line = s.line;
      x.source = normalise_source(s.source);
      x.reason = fmt::format("most frequent: {} {} ({}x)", s.break_id, s.type, worst->second.count);
      x.hint = s.hint;
    }
    out.add(x);
  }
  if (limits.max_recompiles && total_recompiles > *limits.max_recompiles) {
    Finding x;
    x.kind = "max_recompiles";
    x.regression = true;
    x.title = fmt::format("{} recompiles, more than --max-recompiles {}", total_recompiles, *limits.max_recompiles);
    x.baseline = *limits.max_recompiles;
    x.current = total_recompiles;
    for (const auto& f : run.frames) {
      if (f.recompiles == 0) continue;
      x.frame = f.key;
      locate_recompile(x, f, 0, sources);
      break;
    }
    out.add(x);
  }
  if (limits.max_compile_seconds) {
    const auto budget_ns = static_cast<int64_t>(*limits.max_compile_seconds * 1e9);
    for (const auto& f : run.frames) {
      if (f.compile_ns <= budget_ns) continue;
      Finding x;
      x.kind = "max_compile_time";
      x.regression = true;
      x.frame = f.key;
      x.title = fmt::format("frame {} compiled for {:.1f} s, more than --max-compile-seconds {:g}", f.key,
                            static_cast<double>(f.compile_ns) / 1e9, *limits.max_compile_seconds);
      x.file = f.file;
      x.line = f.line;
      x.reason = "`tcprof report` splits the frame's compile time by stage and names graphs compiled more than once";
      x.hint = "a warm compile cache (Inductor's FX-graph cache, tcprof's kernel cache) or fewer recompiles "
               "shortens it";
      x.baseline = budget_ns / 1000000;
      x.current = f.compile_ns / 1000000;
      x.unit = "ms";
      out.add(x);
    }
  }
}

}  // namespace

int64_t GateResult::regressions() const {
  return std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.regression; });
}

int64_t GateResult::improvements() const {
  return static_cast<int64_t>(findings.size()) - regressions();
}

std::string GateResult::verdict() const {
  if (regressions() > 0) return "regression";
  return improvements() > 0 ? "improved" : "pass";
}

GateResult evaluate_gate(const RunView& run, const Baseline* baseline, const GateLimits& limits,
                         const SourceIndex& sources) {
  GateResult result;
  result.has_baseline = baseline != nullptr;
  result.frames = frame_table(run, baseline ? baseline->frames : std::vector<FrameView>{});
  Findings findings;
  if (baseline) {
    compare_break_sites(run, *baseline, findings);
    compare_frames(run, *baseline, sources, findings);
  }
  check_limits(run, limits, sources, findings);
  result.findings = std::move(findings.regressions);
  result.findings.insert(result.findings.end(), findings.improvements.begin(), findings.improvements.end());
  // A run imported from PyTorch's logs is fixed in the user's Python, not with tcprof's flags.
  if (run.run.source == "torch_trace") {
    for (auto& f : result.findings) {
      if (f.kind == "more_recompiles" || f.kind == "max_recompiles") {
        f.hint = "a guard failed on a new input (usually a size): torch._dynamo.mark_dynamic(tensor, dim) "
                 "on the input, or pad inputs to fewer sizes; `tcprof report` shows which guard failed";
      }
    }
  }
  return result;
}

}  // namespace tcprof::analysis
