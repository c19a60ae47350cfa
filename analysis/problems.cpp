#include "analysis/problems.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/call_timing.h"
#include "analysis/duration_text.h"
#include "analysis/hint_groups.h"
#include "analysis/recompiles.h"
#include "core/kernel_name.h"

namespace tcprof::analysis {
namespace {

std::string where(const std::string& file, int line) {
  return file.empty() ? std::string("an unknown line") : fmt::format("{}:{}", file, line);
}

std::string duration(double ns) { return duration_text(ns); }

std::string plural(int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string percent(double share) { return fmt::format("{:.0f}%", 100.0 * share); }

Problem break_problem(const RunSummary& s, const BreakSite& top) {
  Problem p;
  p.kind = "graph_breaks";
  p.score = 100 + static_cast<double>(s.counts.graph_breaks);
  p.title = fmt::format("{} at {}", plural(s.counts.graph_breaks, "graph break", "graph breaks"),
                        plural(s.break_sites, "site", "sites"));
  p.detail = fmt::format("The most frequent is a {} ({}) at {} in {}: {}. Fix: {}.", top.type, top.op,
                         where(top.file, top.line), top.module_path.empty() ? "the root module" : top.module_path,
                         top.reason, top.hint.empty() ? "see the hint in the breaks view" : top.hint);
  p.view = "breaks";
  return p;
}

Problem recompile_problem(const RunSummary& s, const std::vector<RecompileRow>& recompiles) {
  const RecompileRow& first = recompiles.front();
  Problem p;
  p.kind = "recompiles";
  p.score = 90 + 20.0 * static_cast<double>(recompiles.size()) + 200.0 * static_cast<double>(s.counts.recompile_limit_hits);
  p.title = plural(static_cast<int64_t>(recompiles.size()), "recompile", "recompiles");
  if (!first.failures.empty()) {
    const GuardFailureRow& f = first.failures.front();
    p.detail = fmt::format("Frame '{}' recompiled because guard {} failed: expected {}, got {} (guard created at {}).",
                           first.frame_name, f.guard_expr, f.expected, f.actual, where(f.guard_file, f.guard_line));
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
    p.detail = fmt::format("Frame '{}' recompiled: {}.", first.frame_name, first.reason);
  }
  if (s.counts.recompile_limit_hits > 0) {
    p.detail += fmt::format(" The recompile limit was hit {}: later calls ran eagerly.",
                            plural(s.counts.recompile_limit_hits, "time", "times"));
  }
  p.view = "recompiles";
  return p;
}

Problem launch_problem(const LaunchPressure& l) {
  Problem p;
  p.kind = "launch_bound";
  p.score = 45 + 50 * l.api_share();
  p.title = fmt::format("Launch-bound: the host spends {} of each call in CUDA API calls", percent(l.api_share()));
  p.detail = fmt::format(
      "Over {} steady calls the GPU was busy {} of the call ({} of {} on average) and waited for launches the "
      "rest. Fewer, larger kernels (compiled, fused graphs) or one CUDA graph per call shorten it.",
      l.calls, percent(l.gpu_share()), duration(static_cast<double>(l.gpu_ns) / static_cast<double>(l.calls)),
      duration(static_cast<double>(l.call_ns) / static_cast<double>(l.calls)));
  p.view = "kernels";
  return p;
}

std::optional<Problem> kernel_problem(const std::vector<KernelStats>& all) {
  // GPU work in a CUDA run, host kernels otherwise; CUDA API calls are host time spent asking the
  // driver, never a kernel.
  auto gpu = stats_of_place(all, KernelPlace::Gpu);
  const bool on_gpu = !gpu.empty();
  const auto ranked = on_gpu ? gpu : stats_of_place(all, KernelPlace::Host);
  if (ranked.empty()) return std::nullopt;
  const KernelStats& k = ranked.front();
  Problem p;
  p.kind = "slowest_kernel";
  p.score = 30 + k.time_percent / 2;
  // GPU work is kernels, copies and fills: say which, a copy is not a kernel to optimise.
  const char* what = !on_gpu ? "kernel" : k.kind == "memcpy" ? "GPU copy" : k.kind == "memset" ? "GPU fill" : "GPU kernel";
  p.title = fmt::format("Slowest {}: {} ({:.0f}% of {} time)", what, short_kernel_name(k.name), k.time_percent,
                        on_gpu ? "GPU" : "kernel");
  p.detail = fmt::format("{} instances, {} total, {} on average.", k.instances,
                         duration(static_cast<double>(k.total_ns)), duration(k.avg_ns));
  if (short_kernel_name(k.name) != k.name) p.detail += fmt::format(" Full name: {}", k.name);
  p.view = "kernels";
  return p;
}

}  // namespace

LaunchPressure launch_pressure(const std::vector<CallRow>& calls, const std::vector<CompileRow>& compiles,
                               const std::vector<CallKindTime>& times) {
  struct PerCall {
    int64_t runtime = 0, driver = 0, gpu = 0;
  };
  std::unordered_map<Id, PerCall> by_call;
  for (const CallKindTime& t : times) {
    PerCall& c = by_call[t.call_id];
    if (t.kind == "cuda_runtime") c.runtime += t.total_ns;
    else if (t.kind == "cuda_driver") c.driver += t.total_ns;
    else if (kernel_place(t.kind) == KernelPlace::Gpu) c.gpu += t.total_ns;
  }
  LaunchPressure l;
  const std::vector<CallSample> samples = call_samples(calls, compiles);
  for (size_t i = 0; i < calls.size() && i < samples.size(); ++i) {
    if (samples[i].compiled) continue;
    auto it = by_call.find(calls[i].id);
    if (it == by_call.end() || it->second.gpu == 0) continue;  // no GPU work recorded in the call
    l.calls += 1;
    l.call_ns += calls[i].duration_ns;
    l.api_ns += std::max(it->second.runtime, it->second.driver);
    l.gpu_ns += it->second.gpu;
  }
  return l;
}

std::vector<Problem> find_problems(const ProblemInputs& in, size_t limit) {
  std::vector<Problem> out;
  const RunCounts& s = in.summary.counts;
  if (!in.break_sites.empty()) out.push_back(break_problem(in.summary, in.break_sites.front()));
  if (!in.recompiles.empty()) out.push_back(recompile_problem(in.summary, in.recompiles));
  if (s.eager_calls > 0 && s.calls > 0) {
    Problem p;
    const double share = static_cast<double>(s.eager_calls) / static_cast<double>(s.calls);
    p.kind = "eager_calls";
    p.score = 50 + 100 * share;
    p.title = fmt::format("{} of {} calls ran eagerly", s.eager_calls, s.calls);
    p.detail = fmt::format("{} of calls did not use a compiled graph (stance, recompile limit or a failed compile).",
                           percent(share));
    p.view = "recompiles";
    out.push_back(p);
  }
  const double total = static_cast<double>(in.time_range.end_ns - in.time_range.start_ns);
  if (s.compile_time_ns > 0 && total > 0) {
    const double share = static_cast<double>(s.compile_time_ns) / total;
    if (share >= 0.2) {
      Problem p;
      p.kind = "compile_time";
      p.score = 40 + 50 * share;
      p.title = fmt::format("Compiling took {} ({} of the run)", duration(static_cast<double>(s.compile_time_ns)),
                            percent(share));
      p.detail = "Compile time dominates this run; a warm compile cache or fewer recompiles shortens it.";
      p.view = "kernels";
      out.push_back(p);
    }
  }
  if (in.launch.launch_bound()) out.push_back(launch_problem(in.launch));
  if (auto k = kernel_problem(in.kernel_stats)) out.push_back(*k);
  for (const PerfHintGroup& h : group_perf_hints(in.perf_hints)) {  // the most frequent first
    if (h.kind == "recompile_limit") continue;  // covered by the recompile problem
    Problem p;
    p.kind = "perf_hint";
    p.score = 35;
    p.title = fmt::format("Perf hint: {}{}", h.op.empty() ? h.kind : h.op, h.count > 1 ? fmt::format(" (x{})", h.count) : "");
    // A hint about a whole graph (no_gpu_codegen) has no source line: say none rather than "an
    // unknown line".
    p.detail = h.file.empty() ? fmt::format("{}.", h.message) : fmt::format("{} ({}).", h.message, where(h.file, h.line));
    p.view = "graphs";
    out.push_back(p);
    break;  // one hint is enough among the top problems
  }
  std::stable_sort(out.begin(), out.end(), [](const Problem& a, const Problem& b) { return a.score > b.score; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::vector<Problem> find_problems(const RunReader& reader, Id run_id, size_t limit) {
  const RunSummary summary = summarize_run(reader, run_id);
  const auto sites = break_sites(reader, run_id);
  const auto recompiles = recompiles_with_failures(reader, run_id);
  const auto stats = kernel_stats(reader, run_id);
  const auto hints = reader.perf_hints(run_id);
  const LaunchPressure launch =
      launch_pressure(reader.calls(run_id), reader.compiles(run_id), reader.call_kind_times(run_id));
  return find_problems({summary, sites, recompiles, reader.time_range(run_id), stats, hints, launch}, limit);
}

}  // namespace tcprof::analysis
