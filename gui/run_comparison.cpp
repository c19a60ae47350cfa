#include "gui/run_comparison.h"

#include <algorithm>
#include <map>

namespace tcprof::gui {
namespace {

// A break site is "the same" across runs when its cause and location match; counts may differ.
std::string site_key(const BreakSite& s) {
  return s.type + '\x1f' + s.break_id + '\x1f' + s.op + '\x1f' + s.file + '\x1f' +
         std::to_string(s.line) + '\x1f' + s.module_path;
}

}  // namespace

int RunComparison::added() const {
  return static_cast<int>(std::count_if(breaks.begin(), breaks.end(), [](const BreakChange& c) { return c.kind == BreakChange::Added; }));
}

int RunComparison::removed() const {
  return static_cast<int>(std::count_if(breaks.begin(), breaks.end(), [](const BreakChange& c) { return c.kind == BreakChange::Removed; }));
}

RunComparison compare_runs(const RunData& a, const RunData& b) {
  RunComparison out;
  const RunSummary& sa = a.summary;
  const RunSummary& sb = b.summary;
  auto add = [&](const char* metric, double va, double vb, bool lower_better = true, bool ms = false) {
    out.counts.push_back({metric, va, vb, lower_better, ms});
  };
  add("Graph breaks", double(sa.graph_breaks), double(sb.graph_breaks));
  add("Break sites", double(sa.break_sites), double(sb.break_sites));
  add("Graphs", double(sa.graphs), double(sb.graphs));
  add("Recompiles", double(sa.recompiles), double(sb.recompiles));
  add("Guard failures", double(sa.guard_failures), double(sb.guard_failures));
  add("Eager calls", double(sa.eager_calls), double(sb.eager_calls));
  add("Calls", double(sa.calls), double(sb.calls), false);
  add("Kernels", double(sa.kernels), double(sb.kernels), false);
  add("Compile time (ms)", double(sa.compile_time_ns) / 1e6, double(sb.compile_time_ns) / 1e6, true, true);
  add("ms per call (median)", sa.ms_per_call, sb.ms_per_call, true, true);
  if (sa.steps > 0 || sb.steps > 0) add("ms per step (median)", sa.ms_per_step, sb.ms_per_step, true, true);

  std::map<std::string, BreakChange> sites;
  for (const BreakSite& s : a.break_sites) {
    BreakChange& c = sites[site_key(s)];
    c.site = s;
    c.count_a += s.count;
  }
  for (const BreakSite& s : b.break_sites) {
    BreakChange& c = sites[site_key(s)];
    c.site = s;
    c.count_b += s.count;
  }
  for (auto& [key, c] : sites) {
    c.kind = c.count_a == 0 ? BreakChange::Added : (c.count_b == 0 ? BreakChange::Removed : BreakChange::Both);
    out.breaks.push_back(c);
  }
  std::stable_sort(out.breaks.begin(), out.breaks.end(),
                   [](const BreakChange& x, const BreakChange& y) { return x.kind < y.kind; });

  std::map<QString, KernelChange> kernels;
  for (const KernelAggregate& r : a.kernel_summary) {
    KernelChange& k = kernels[a.kernels.names[r.name]];
    k.total_a += r.total_ns;
    k.instances_a += r.instances;
  }
  for (const KernelAggregate& r : b.kernel_summary) {
    KernelChange& k = kernels[b.kernels.names[r.name]];
    k.total_b += r.total_ns;
    k.instances_b += r.instances;
  }
  for (auto& [name, k] : kernels) {
    k.name = name;
    out.kernels.push_back(k);
  }
  std::sort(out.kernels.begin(), out.kernels.end(), [](const KernelChange& x, const KernelChange& y) {
    return std::llabs(x.delta()) != std::llabs(y.delta()) ? std::llabs(x.delta()) > std::llabs(y.delta()) : x.name < y.name;
  });
  return out;
}

}  // namespace tcprof::gui
