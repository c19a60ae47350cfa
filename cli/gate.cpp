#include "cli/gate.h"

#include <algorithm>
#include <fstream>
#include <map>

#include <fmt/format.h>

namespace tcprof::cli {
namespace {

struct SiteTotal {
  const SiteBreaks* site = nullptr;  // first occurrence
  std::string frame;
  int64_t count = 0;
};

// Break sites are matched across the whole run, not per frame: a break added early in forward
// moves later breaks into a new resume frame, and that alone must not read as new breaks.
std::vector<std::pair<std::string, SiteTotal>> site_totals(const std::vector<FrameView>& frames) {
  std::vector<std::pair<std::string, SiteTotal>> out;
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

const SiteTotal* find_site(const std::vector<std::pair<std::string, SiteTotal>>& totals, const std::string& key) {
  for (const auto& [k, t] : totals) {
    if (k == key) return &t;
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
  f.source = t.site->source;
  f.reason = t.site->reason;
  f.hint = t.site->hint;
  if (!t.site->module_path.empty()) f.reason += fmt::format(" (in {})", t.site->module_path);
  f.baseline = baseline;
  f.current = current;
  return f;
}

// The text of line `line` of `path`, when the file is here to read (guards record no source).
std::string source_line(const std::string& path, int line) {
  std::ifstream in(path);
  std::string text;
  for (int n = 1; n <= line && std::getline(in, text); ++n) {
    if (n == line) return normalise_source(text);
  }
  return "";
}

// Where a recompile comes from: the first failed guard that points at user code, else the frame.
void locate_recompile(Finding& f, const FrameView& frame, size_t first_extra) {
  if (first_extra < frame.recompile_rows.size()) {
    const RecompileRow& r = frame.recompile_rows[first_extra];
    std::string guard;
    for (const auto& gf : r.failures) {
      if (gf.guard_file.empty()) continue;
      f.file = gf.guard_file;
      f.line = gf.guard_line;
      f.source = source_line(gf.guard_file, gf.guard_line);
      guard = gf.guard_expr;
      break;
    }
    if (guard.empty() && !r.failures.empty()) guard = r.failures.front().guard_expr;
    f.reason = guard.empty() ? r.reason : fmt::format("guard {} failed: {}", guard, r.reason);
  }
  if (f.file.empty() && !frame.file.empty()) {
    f.file = frame.file;
    f.line = frame.line;
  }
  f.hint = "a guard failed on a new input (usually a size): mark the dimension dynamic "
           "(--dynamic I:D) or pad inputs to fewer sizes; `tcprof report` shows shape advice";
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

GateResult evaluate_gate(const RunView& run, const Baseline* baseline, const GateLimits& limits) {
  GateResult result;
  result.has_baseline = baseline != nullptr;
  std::vector<Finding> regressions, improvements;
  static const std::vector<FrameView> no_frames;
  const std::vector<FrameView>& base_frames = baseline ? baseline->frames : no_frames;
  auto base_frame = [&](const std::string& key) -> const FrameView* {
    for (const auto& f : base_frames) {
      if (f.key == key) return &f;
    }
    return nullptr;
  };

  for (const auto& f : run.frames) {
    GateFrame g;
    g.key = f.key;
    g.in_run = true;
    g.graphs = f.graphs;
    g.breaks = f.break_count();
    g.recompiles = f.recompiles;
    g.eager_fallbacks = f.eager_fallbacks;
    if (const FrameView* b = base_frame(f.key)) {
      g.in_baseline = true;
      g.base_graphs = b->graphs;
      g.base_breaks = b->break_count();
      g.base_recompiles = b->recompiles;
      g.base_eager_fallbacks = b->eager_fallbacks;
    }
    result.frames.push_back(g);
  }
  for (const auto& b : base_frames) {
    bool in_run = std::any_of(run.frames.begin(), run.frames.end(), [&](const FrameView& f) { return f.key == b.key; });
    if (in_run) continue;
    GateFrame g;
    g.key = b.key;
    g.in_baseline = true;
    g.base_graphs = b.graphs;
    g.base_breaks = b.break_count();
    g.base_recompiles = b.recompiles;
    g.base_eager_fallbacks = b.eager_fallbacks;
    result.frames.push_back(g);
  }

  if (baseline) {
    auto run_sites = site_totals(run.frames);
    auto base_sites = site_totals(base_frames);
    for (const auto& [key, now] : run_sites) {
      const SiteTotal* before = find_site(base_sites, key);
      if (!before) {
        regressions.push_back(break_finding("new_graph_break", true, "new graph break", now, 0, now.count));
      } else if (now.count > before->count) {
        regressions.push_back(break_finding("more_graph_breaks", true, "more graph breaks at", now,
                                            before->count, now.count));
      } else if (now.count < before->count) {
        improvements.push_back(break_finding("fewer_graph_breaks", false, "fewer graph breaks at", now,
                                             before->count, now.count));
      }
    }
    for (const auto& [key, before] : base_sites) {
      if (find_site(run_sites, key)) continue;
      improvements.push_back(break_finding("removed_graph_break", false, "graph break removed:", before,
                                           before.count, 0));
    }

    for (const auto& f : run.frames) {
      const FrameView* b = base_frame(f.key);
      int64_t base_recompiles = b ? b->recompiles : 0;
      int64_t base_eager = b ? b->eager_fallbacks : 0;
      if (f.recompiles != base_recompiles) {
        Finding x;
        bool more = f.recompiles > base_recompiles;
        x.kind = more ? "more_recompiles" : "fewer_recompiles";
        x.regression = more;
        x.frame = f.key;
        x.title = fmt::format("{} recompiles in {}", more ? "more" : "fewer", f.key);
        x.baseline = base_recompiles;
        x.current = f.recompiles;
        if (more) {
          locate_recompile(x, f, static_cast<size_t>(base_recompiles));
        } else {
          x.reason = fmt::format("{} recompiles instead of {}", f.recompiles, base_recompiles);
        }
        (more ? regressions : improvements).push_back(x);
      }
      if (f.eager_fallbacks != base_eager) {
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
        (more ? regressions : improvements).push_back(x);
      }
    }
    for (const auto& b : base_frames) {
      if (result.frames.end() != std::find_if(result.frames.begin(), result.frames.end(),
                                              [&](const GateFrame& g) { return g.key == b.key && g.in_run; })) {
        continue;
      }
      if (b.recompiles > 0) {
        Finding x;
        x.kind = "fewer_recompiles";
        x.frame = b.key;
        x.title = fmt::format("fewer recompiles in {}", b.key);
        x.reason = fmt::format("the frame is gone; it had {} recompiles", b.recompiles);
        x.baseline = b.recompiles;
        improvements.push_back(x);
      }
      if (b.eager_fallbacks > 0) {
        Finding x;
        x.kind = "fewer_eager_fallbacks";
        x.frame = b.key;
        x.title = fmt::format("fewer eager fallbacks in {}", b.key);
        x.reason = fmt::format("the frame is gone; it had {} eager fallbacks", b.eager_fallbacks);
        x.baseline = b.eager_fallbacks;
        improvements.push_back(x);
      }
    }
  }

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
      const SiteBreaks& s = *worst->second.site;
      x.frame = worst->second.frame;
      x.file = s.file;
      x.line = s.line;
      x.source = s.source;
      x.reason = fmt::format("most frequent: {} {} ({}x)", s.break_id, s.type, worst->second.count);
      x.hint = s.hint;
    }
    regressions.push_back(x);
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
      locate_recompile(x, f, 0);
      break;
    }
    regressions.push_back(x);
  }
  result.findings = std::move(regressions);
  result.findings.insert(result.findings.end(), improvements.begin(), improvements.end());
  return result;
}

}  // namespace tcprof::cli
