#include "gui/problems.h"

#include <algorithm>

#include "gui/format.h"

namespace tcprof::gui {
namespace {
QString where(const std::string& file, int line) {
  return file.empty() ? QString("an unknown line") : QString("%1:%2").arg(q(file)).arg(line);
}
}  // namespace

std::vector<Problem> find_problems(const RunData& run, size_t limit) {
  std::vector<Problem> out;
  const RunCounts& s = run.summary.counts;

  if (!run.break_sites.empty()) {
    const analysis::BreakSite& top = run.break_sites.front();
    Problem p;
    p.score = 100 + static_cast<double>(s.graph_breaks);
    p.title = QString("%1 graph break(s) at %2 site(s)").arg(s.graph_breaks).arg(run.summary.break_sites);
    p.detail = QString("The most frequent is a %1 (%2) at %3 in %4: %5. Fix: %6.")
                   .arg(q(top.type), q(top.op), where(top.file, top.line),
                        top.module_path.empty() ? QString("the root module") : q(top.module_path),
                        q(top.reason), top.hint.empty() ? QString("see the hint in the view") : q(top.hint));
    p.view = "breaks";
    out.push_back(p);
  }
  if (!run.recompiles.empty()) {
    const RecompileRow& first = run.recompiles.front();
    Problem p;
    p.score = 90 + 20.0 * static_cast<double>(run.recompiles.size()) + 200.0 * static_cast<double>(s.recompile_limit_hits);
    p.title = QString("%1 recompile(s)").arg(run.recompiles.size());
    if (!first.failures.empty()) {
      const GuardFailureRow& f = first.failures.front();
      p.detail = QString("Frame '%1' recompiled because guard %2 failed: expected %3, got %4 "
                         "(guard created at %5).")
                     .arg(q(first.frame_name), q(f.guard_expr), q(f.expected), q(f.actual),
                          where(f.guard_file, f.guard_line));
      // Advice only where it is known to help: a size guard is what `--dynamic I:D` removes; a
      // decision on a size (an `if` on x.size(0)) compiles a graph per outcome whatever is dynamic.
      if (f.guard_kind == "size") {
        p.detail += " Marking that dimension dynamic avoids it.";
      } else if (f.guard_kind == "shape_expr") {
        p.detail += " It is a decision on a size: each outcome compiles its own graph, so marking the dimension "
                    "dynamic does not avoid it; make the code independent of the size.";
      } else if (f.guard_kind == "dtype") {
        p.detail += " Feeding one dtype (cast before the call) avoids it.";
      }
    } else {
      p.detail = QString("Frame '%1' recompiled: %2.").arg(q(first.frame_name), q(first.reason));
    }
    if (s.recompile_limit_hits > 0) {
      p.detail += QString(" The recompile limit was hit %1 time(s): later calls ran eagerly.")
                      .arg(s.recompile_limit_hits);
    }
    p.view = "recompiles";
    out.push_back(p);
  }
  if (s.eager_calls > 0 && s.calls > 0) {
    Problem p;
    const double share = 100.0 * static_cast<double>(s.eager_calls) / static_cast<double>(s.calls);
    p.score = 50 + share;
    p.title = QString("%1 of %2 calls ran eagerly").arg(s.eager_calls).arg(s.calls);
    p.detail = QString("%1% of calls did not use a compiled graph (stance, recompile limit or a "
                       "failed compile).").arg(share, 0, 'f', 0);
    p.view = "recompiles";
    out.push_back(p);
  }
  const double total = static_cast<double>(run.time_range.end_ns - run.time_range.start_ns);
  if (s.compile_time_ns > 0 && total > 0) {
    const double share = 100.0 * static_cast<double>(s.compile_time_ns) / total;
    if (share >= 20) {
      Problem p;
      p.score = 40 + share / 2;
      p.title = QString("Compiling took %1 (%2% of the run)").arg(format_ns(static_cast<double>(s.compile_time_ns))).arg(share, 0, 'f', 0);
      p.detail = "Compile time dominates this run; a warm compile cache or fewer recompiles shortens it.";
      p.view = "kernels";
      out.push_back(p);
    }
  }
  if (!run.kernel_summary.empty()) {
    const analysis::KernelStats& k = run.kernel_summary.front();
    Problem p;
    p.score = 30 + k.time_percent / 2;
    p.title = QString("Slowest kernel: %1 (%2% of kernel time)").arg(QString::fromStdString(k.name)).arg(k.time_percent, 0, 'f', 0);
    p.detail = QString("%1 instances, %2 total, %3 on average.")
                   .arg(format_count(k.instances), format_ns(static_cast<double>(k.total_ns)), format_ns(k.avg_ns));
    p.view = "kernels";
    out.push_back(p);
  }
  for (const PerfHintRow& h : run.perf_hints) {
    if (h.kind == "recompile_limit") continue;  // covered by the recompile problem
    Problem p;
    p.score = 35;
    p.title = QString("Perf hint: %1").arg(q(h.op.empty() ? h.kind : h.op));
    p.detail = QString("%1 (%2).").arg(q(h.message), where(h.file, h.line));
    p.view = "graphs";
    out.push_back(p);
    break;  // one hint is enough among the top problems
  }
  std::stable_sort(out.begin(), out.end(), [](const Problem& a, const Problem& b) { return a.score > b.score; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace tcprof::gui
