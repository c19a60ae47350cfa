#include "analysis/run_comparison.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace tcprof::analysis {
namespace {

struct SiteTotal {
  const BreakSite* site = nullptr;
  std::string frame;
  int64_t count = 0;
};

// Breaks per site over the whole run, in first-seen order.
std::vector<SiteTotal> site_totals(const RunView& v) {
  std::vector<SiteTotal> out;
  for (const auto& f : v.frames) {
    for (const auto& s : f.breaks) {
      auto it = std::find_if(out.begin(), out.end(), [&](const SiteTotal& t) { return t.site->key == s.key; });
      if (it == out.end()) {
        out.push_back({&s, f.key, 0});
        it = std::prev(out.end());
      }
      it->count += s.count;
    }
  }
  return out;
}

std::vector<SiteChange> compare_sites(const RunView& a, const RunView& b) {
  auto ta = site_totals(a), tb = site_totals(b);
  auto find = [](const std::vector<SiteTotal>& v, const std::string& key) -> const SiteTotal* {
    for (const auto& t : v) {
      if (t.site->key == key) return &t;
    }
    return nullptr;
  };
  std::vector<SiteChange> added, removed, changed, unchanged;
  for (const auto& s : tb) {
    const SiteTotal* before = find(ta, s.site->key);
    int64_t count_a = before ? before->count : 0;
    auto kind = !before ? SiteChange::Kind::Added
                        : count_a != s.count ? SiteChange::Kind::Changed : SiteChange::Kind::Unchanged;
    SiteChange c{kind, *s.site, s.frame, count_a, s.count};
    (kind == SiteChange::Kind::Added ? added : kind == SiteChange::Kind::Changed ? changed : unchanged)
        .push_back(std::move(c));
  }
  for (const auto& s : ta) {
    if (!find(tb, s.site->key)) removed.push_back({SiteChange::Kind::Removed, *s.site, s.frame, s.count, 0});
  }
  std::vector<SiteChange> out = std::move(added);
  for (auto* part : {&removed, &changed, &unchanged}) {
    out.insert(out.end(), std::make_move_iterator(part->begin()), std::make_move_iterator(part->end()));
  }
  return out;
}

std::vector<FrameChange> compare_frames(const RunView& a, const RunView& b) {
  std::vector<FrameChange> out;
  for (const auto& f : a.frames) out.push_back({f.key, f.recompiles, 0, f.guard_failures, 0});
  for (const auto& f : b.frames) {
    auto it = std::find_if(out.begin(), out.end(), [&](const FrameChange& c) { return c.key == f.key; });
    if (it == out.end()) {
      out.push_back({f.key, 0, 0, 0, 0});
      it = std::prev(out.end());
    }
    it->b_recompiles = f.recompiles;
    it->b_failures = f.guard_failures;
  }
  return out;
}

void sort_by_delta(std::vector<TimeDelta>& v) {
  std::stable_sort(v.begin(), v.end(), [](const TimeDelta& x, const TimeDelta& y) {
    int64_t dx = std::llabs(x.delta()), dy = std::llabs(y.delta());
    return dx != dy ? dx > dy : x.name < y.name;
  });
}

// Rows keyed by name, A's values then B's, in first-seen order.
class DeltaTable {
 public:
  void add(const std::string& name, bool into_a, int64_t ns, int64_t count) {
    auto [it, inserted] = index_.try_emplace(name, rows_.size());
    if (inserted) rows_.push_back({name, 0, 0, 0, 0});
    TimeDelta& t = rows_[it->second];
    (into_a ? t.a_ns : t.b_ns) += ns;
    (into_a ? t.a_count : t.b_count) += count;
  }
  std::vector<TimeDelta> sorted() {
    sort_by_delta(rows_);
    return std::move(rows_);
  }

 private:
  std::vector<TimeDelta> rows_;
  std::map<std::string, size_t> index_;
};

// Kernel time per graph, by compile id: the same id names the same graph in both runs.
std::vector<TimeDelta> compare_graph_times(const ComparedRun& a, const ComparedRun& b) {
  DeltaTable table;
  for (const auto* side : {&a, &b}) {
    for (const auto& g : side->graph_times) {
      table.add(g.compile_label.empty() ? "(outside graphs)" : g.compile_label, side == &a, g.total_ns,
                g.instances);
    }
  }
  return table.sorted();
}

std::string kernel_label(const KernelStats& k) {
  bool host = k.device.empty() || k.device == "cpu";
  return host ? k.name : k.name + " [" + k.device + "]";
}

std::vector<TimeDelta> compare_kernels(const ComparedRun& a, const ComparedRun& b) {
  DeltaTable table;
  for (const auto* side : {&a, &b}) {
    for (const auto& k : side->kernels) table.add(kernel_label(k), side == &a, k.total_ns, k.instances);
  }
  return table.sorted();
}

// Compile time per stage (every stage, in order, so both sides show the same rows) and per frame.
void compare_compile_time(const ComparedRun& a, const ComparedRun& b, RunComparison& c) {
  for (int s = 0; s < kCompileStages; ++s) {
    c.compile_stages.push_back({stage_name(static_cast<CompileStage>(s)), a.compile_time.stage_ns[s],
                                b.compile_time.stage_ns[s], 0, 0});
  }
  DeltaTable frames;
  for (const auto* side : {&a, &b}) {
    for (const auto& f : side->compile_time.frames) {
      auto it = std::find_if(side->view.frames.begin(), side->view.frames.end(),
                             [&](const FrameView& v) { return v.id == f.frame_id; });
      const std::string key = it != side->view.frames.end() ? it->key : (f.frame.empty() ? "-" : f.frame);
      frames.add(key, side == &a, f.total_ns, f.compiles);
    }
  }
  c.compile_frames = frames.sorted();
  c.a_cache = a.compile_time.cache;
  c.b_cache = b.compile_time.cache;
}

// The share of a run's calls whose GPU work was recorded: all of them unless it sampled.
std::string coverage_words(const ComparedRun& r) {
  if (!r.gpu_calls.sampled()) return "all its calls";
  return fmt::format("{} of {} calls", r.gpu_calls.recorded, r.gpu_calls.recorded + r.gpu_calls.skipped);
}

std::string kernel_caveat(const ComparedRun& a, const ComparedRun& b) {
  auto share = [](const GpuCallCoverage& c) {
    return c.sampled() ? static_cast<double>(c.recorded) / static_cast<double>(c.recorded + c.skipped) : 1.0;
  };
  if (std::abs(share(a.gpu_calls) - share(b.gpu_calls)) < 1e-9) return {};  // recorded alike
  return fmt::format("GPU work was recorded on {} in A and on {} in B (--profile summary samples calls on a GPU): "
                     "their GPU kernel totals do not compare; record both the same way (--profile full records "
                     "every call).",
                     coverage_words(a), coverage_words(b));
}

}  // namespace

ComparedRun compared_run(const RunReader& reader, Id run_id) {
  ComparedRun r;
  r.view = view_run(reader, run_id);
  r.summary = summarize_run(reader, run_id);
  r.kernels = kernel_stats(reader, run_id);
  r.graph_times = reader.graph_kernel_times(run_id);
  r.compile_time = compile_time(reader, run_id, RepeatedGraphs::Skip);
  r.gpu_calls = gpu_call_coverage(reader.counters(run_id));
  return r;
}

std::vector<const SiteChange*> RunComparison::of_kind(SiteChange::Kind kind) const {
  std::vector<const SiteChange*> out;
  for (const auto& s : sites) {
    if (s.kind == kind) out.push_back(&s);
  }
  return out;
}

int64_t RunComparison::count(SiteChange::Kind kind) const {
  return static_cast<int64_t>(of_kind(kind).size());
}

RunComparison compare_runs(const ComparedRun& a, const ComparedRun& b) {
  RunComparison c;
  c.sites = compare_sites(a.view, b.view);
  c.frames = compare_frames(a.view, b.view);
  c.graphs = compare_graph_times(a, b);
  c.kernels = compare_kernels(a, b);
  compare_compile_time(a, b, c);
  c.kernel_caveat = kernel_caveat(a, b);
  return c;
}

}  // namespace tcprof::analysis
