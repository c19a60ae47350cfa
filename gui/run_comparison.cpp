#include "gui/run_comparison.h"

namespace tcprof::gui {
namespace {

analysis::ComparedRun compared(const RunData& r) {
  return {r.view, r.summary, r.kernel_summary, r.graph_times, r.compile_time, r.gpu_calls};
}

std::vector<CountChange> headline_counts(const RunData& ra, const RunData& rb, const analysis::RunComparison& changes) {
  const analysis::RunSummary &a = ra.summary, &b = rb.summary;
  std::vector<CountChange> out;
  auto add = [&](const char* metric, double va, double vb, bool lower_better = true, bool ms = false) {
    out.push_back({metric, va, vb, lower_better, ms});
  };
  const RunCounts &ca = a.counts, &cb = b.counts;
  add("Graph breaks", double(ca.graph_breaks), double(cb.graph_breaks));
  add("Break sites", double(a.break_sites), double(b.break_sites));
  add("Graphs", double(ca.graphs), double(cb.graphs));
  add("Recompiles", double(ca.recompiles), double(cb.recompiles));
  add("Guard failures", double(ca.guard_failures), double(cb.guard_failures));
  add("Eager calls", double(ca.eager_calls), double(cb.eager_calls));
  add("Calls", double(ca.calls), double(cb.calls), false);
  add("Kernels", double(ca.kernels), double(cb.kernels), false);
  // Compile time as compile_time.h counts it, and each stage that either run spent time in.
  add("Compile time (ms)", double(ra.compile_time.total_ns) / 1e6, double(rb.compile_time.total_ns) / 1e6, true, true);
  for (const analysis::TimeDelta& s : changes.compile_stages) {
    if (s.a_ns == 0 && s.b_ns == 0) continue;
    out.push_back({QString("  %1 (ms)").arg(QString::fromStdString(s.name)), double(s.a_ns) / 1e6, double(s.b_ns) / 1e6,
                   true, true});
  }
  if (changes.a_cache.any() || changes.b_cache.any()) {
    add("  FX graph cache hits", changes.a_cache.fx_hits, changes.b_cache.fx_hits, false);
    add("  FX graph cache misses", changes.a_cache.fx_misses, changes.b_cache.fx_misses);
    add("  AOTAutograd cache hits", changes.a_cache.aot_hits, changes.b_cache.aot_hits, false);
    add("  AOTAutograd cache misses", changes.a_cache.aot_misses, changes.b_cache.aot_misses);
  }
  add("Steady median ms/call", a.call_timing.steady_median_ns / 1e6, b.call_timing.steady_median_ns / 1e6, true, true);
  add("Mean ms/call incl. compile", a.call_timing.mean_incl_compile_ns / 1e6, b.call_timing.mean_incl_compile_ns / 1e6,
      true, true);
  if (ca.steps > 0 || cb.steps > 0) add("ms per step (median)", a.ms_per_step, b.ms_per_step, true, true);
  return out;
}

}  // namespace

RunComparison compare_runs(const RunData& a, const RunData& b) {
  RunComparison out;
  out.changes = analysis::compare_runs(compared(a), compared(b));
  out.counts = headline_counts(a, b, out.changes);
  return out;
}

}  // namespace tcprof::gui
