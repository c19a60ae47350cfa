// `tcprof report DB`: what happened in each recorded run, most important first.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/break_sites.h"
#include "analysis/compile_time.h"
#include "analysis/hint_groups.h"
#include "analysis/rank_divergence.h"
#include "analysis/kernel_stats.h"
#include "analysis/recompiles.h"
#include "analysis/problems.h"
#include "analysis/run_summary.h"
#include "cli/commands.h"
#include "cli/json_rows.h"
#include "cli/kernel_report.h"
#include "cli/shape_advice.h"
#include "cli/text_format.h"
#include "core/error.h"
#include "core/run_reader.h"

namespace tcprof::cli {
namespace {

struct ReportOptions {
  std::string db;
  std::optional<int64_t> run_id;
  bool json = false;
  bool kernels = false;  // --kernels: the kernel table and per-graph split instead of the summary
  size_t top = 10;
};

std::vector<RunRow> selected_runs(const RunReader& reader, const ReportOptions& o) {
  auto runs = reader.runs();
  if (!o.run_id) return runs;
  auto it = std::find_if(runs.begin(), runs.end(), [&](const RunRow& r) { return r.id == *o.run_id; });
  if (it == runs.end()) {
    throw Error(ErrorKind::Usage, fmt::format("'{}' has no run {} (it has {})", o.db, *o.run_id,
                                              text::plural(static_cast<int64_t>(runs.size()), "run", "runs")));
  }
  return {*it};
}

void write_counts(fmt::memory_buffer& out, const analysis::RunSummary& summary, bool imported) {
  const RunCounts& s = summary.counts;
  auto o = std::back_inserter(out);
  if (imported && s.calls == 0) {
    // TORCH_TRACE logs compiles only; calls and kernels come from a profiler trace.
    fmt::format_to(o, "  calls not recorded (import a torch.profiler trace with --kineto)");
  } else {
    fmt::format_to(o, "  calls {} (eager {})", text::count(s.calls), text::count(s.eager_calls));
  }
  if (s.kernels > 0) fmt::format_to(o, " · kernels {}", text::count(s.kernels));
  if (summary.peak_gpu_bytes > 0) fmt::format_to(o, " · peak GPU memory {}", text::bytes(summary.peak_gpu_bytes));
  if (s.calls > 0) fmt::format_to(o, "\n  {}", text::call_timing(summary.call_timing));
  fmt::format_to(o, "\n  compiles {} ({}) · recompiles {} · guard failures {}\n",
                 text::count(s.compiles), text::duration(static_cast<double>(s.compile_time_ns)),
                 text::count(s.recompiles), text::count(s.guard_failures));
  fmt::format_to(o, "  graphs {} · graph breaks {} at {}", text::count(s.graphs),
                 text::count(s.graph_breaks), text::plural(summary.break_sites, "site", "sites"));
  if (s.steps > 0) {
    fmt::format_to(o, " · steps {} · {}/step", text::count(s.steps),
                   text::duration(summary.ms_per_step * 1e6));
    if (summary.ms_per_step_forward > 0) {
      fmt::format_to(o, "\n  step phases (medians): forward {} · backward {} · optimizer {}",
                     text::duration(summary.ms_per_step_forward * 1e6),
                     text::duration(summary.ms_per_step_backward * 1e6),
                     text::duration(summary.ms_per_step_optimizer * 1e6));
    }
  }
  out.push_back('\n');
}

void write_breaks(fmt::memory_buffer& out, const std::vector<analysis::BreakSite>& sites, size_t top) {
  if (sites.empty()) return;
  fmt::format_to(std::back_inserter(out), "\n  Graph breaks ({})\n", text::plural(static_cast<int64_t>(sites.size()), "site", "sites"));
  for (size_t i = 0; i < std::min(top, sites.size()); ++i) {
    const auto& b = sites[i];
    std::string where = text::location(b.file, b.line, b.col);
    if (!b.module_path.empty()) where += "  (" + b.module_path + ")";
    auto o = std::back_inserter(out);
    fmt::format_to(o, "{}", text::wrap(fmt::format("  {:>4}x {} {} ", b.count, b.break_id, b.type), where));
    if (!b.source.empty()) fmt::format_to(o, "{}", text::wrap("        | ", text::trim(b.source)));
    fmt::format_to(o, "{}", text::wrap("        ", b.reason));
    if (!b.hint.empty()) fmt::format_to(o, "{}", text::wrap("        hint: ", b.hint));
  }
  if (sites.size() > top) fmt::format_to(std::back_inserter(out), "        … {} more\n", sites.size() - top);
}

// The GUI overview's list (analysis/problems.h), first after the counts: what the user came for.
void write_problems(fmt::memory_buffer& out, const std::vector<analysis::Problem>& problems) {
  if (problems.empty()) return;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "\n  Biggest problems\n");
  for (size_t i = 0; i < problems.size(); ++i) {
    fmt::format_to(o, "{}", text::wrap(fmt::format("    {}. ", i + 1), problems[i].title));
    fmt::format_to(o, "{}", text::wrap("       ", problems[i].detail));
  }
}

void write_recompiles(fmt::memory_buffer& out, const std::vector<RecompileRow>& recompiles, size_t top) {
  if (recompiles.empty()) return;
  fmt::format_to(std::back_inserter(out), "\n  Recompiles ({})\n", recompiles.size());
  for (size_t i = 0; i < std::min(top, recompiles.size()); ++i) {
    const auto& r = recompiles[i];
    fmt::format_to(std::back_inserter(out), "{}", text::wrap(fmt::format("    {} {}: ", r.compile_label, r.frame_name),
                                                           r.reason));
    for (const auto& f : r.failures) {
      std::string where = f.guard_file.empty() ? "" : "  at " + text::location(f.guard_file, f.guard_line);
      fmt::format_to(std::back_inserter(out), "{}",
                     text::wrap("      ", fmt::format("guard {} failed: expected {}, actual {}{}", f.guard_expr,
                                                    f.expected, f.actual, where)));
    }
  }
  if (recompiles.size() > top) fmt::format_to(std::back_inserter(out), "    … {} more\n", recompiles.size() - top);
}

std::string stages_text(const std::array<int64_t, analysis::kCompileStages>& stage_ns) {
  std::string text;
  for (int st = 0; st < analysis::kCompileStages; ++st) {
    if (stage_ns[st] <= 0) continue;
    text += fmt::format("{}{} {}", text.empty() ? "" : " · ", analysis::stage_name(static_cast<analysis::CompileStage>(st)),
                        text::duration(static_cast<double>(stage_ns[st])));
  }
  return text;
}

void write_compile_time(fmt::memory_buffer& out, const analysis::CompileTimeReport& t, size_t top) {
  if (t.compiles.empty() || t.total_ns <= 0) return;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "\n  Compile time {} in {}\n", text::duration(static_cast<double>(t.total_ns)),
                 text::plural(static_cast<int64_t>(t.compiles.size()), "compile", "compiles"));
  fmt::format_to(o, "{}", text::wrap("    stages: ", stages_text(t.stage_ns)));
  if (t.cache.any()) {
    fmt::format_to(o, "{}", text::wrap("    caches: ", fmt::format("FX graph {} hit(s), {} miss(es) · AOTAutograd {} hit(s), "
                                                                   "{} miss(es)", t.cache.fx_hits, t.cache.fx_misses,
                                                                   t.cache.aot_hits, t.cache.aot_misses)));
  }
  for (size_t i = 0; i < std::min(top, t.frames.size()); ++i) {
    const auto& f = t.frames[i];
    fmt::format_to(o, "    {}: {}, {}\n", f.frame.empty() ? "-" : f.frame, text::plural(f.compiles, "compile", "compiles"),
                   text::duration(static_cast<double>(f.total_ns)));
    fmt::format_to(o, "{}", text::wrap("      ", stages_text(f.stage_ns)));
  }
  for (size_t i = 0; i < std::min(top, t.repeated.size()); ++i) {
    fmt::format_to(o, "{}", text::wrap("    ", analysis::advice(t.repeated[i])));
  }
  for (size_t i = 0; i < std::min(top, t.blocks.size()); ++i) {
    fmt::format_to(o, "{}", text::wrap("    ", analysis::advice(t.blocks[i])));
  }
}

void write_kernels(fmt::memory_buffer& out, const std::vector<analysis::KernelStats>& all, size_t top) {
  // A CUDA run ranks the GPU's work; CUDA API calls and host ops are in `report --kernels`.
  auto gpu = analysis::stats_of_place(all, analysis::KernelPlace::Gpu);
  const auto& kernels = gpu.empty() ? all : gpu;
  if (kernels.empty()) return;
  fmt::format_to(std::back_inserter(out), "\n  {} (top {} of {} by total time)\n",
                 gpu.empty() ? "Kernels" : "GPU kernels", std::min(top, kernels.size()), kernels.size());
  fmt::format_to(std::back_inserter(out), "    {:>6} {:>9} {:>7} {:>9} {:>9}  {}\n", "Time", "Total",
                 "Inst", "Avg", "Max", "Name");
  for (size_t i = 0; i < std::min(top, kernels.size()); ++i) {
    const auto& k = kernels[i];
    fmt::format_to(std::back_inserter(out), "    {:>6} {:>9} {:>7} {:>9} {:>9}  {}\n",
                   text::percent(k.time_percent), text::duration(static_cast<double>(k.total_ns)),
                   text::count(k.instances), text::duration(k.avg_ns),
                   text::duration(static_cast<double>(k.max_ns)),
                   text::fit(k.name, std::max<size_t>(28, text::terminal_width() - 50)));
  }
}

void write_steps(fmt::memory_buffer& out, const std::vector<StepRow>& steps) {
  if (steps.empty()) return;
  std::optional<double> first, last;
  for (const auto& s : steps) {
    if (!s.loss) continue;
    if (!first) first = s.loss;
    last = s.loss;
  }
  fmt::format_to(std::back_inserter(out), "\n  Training: {}", text::plural(static_cast<int64_t>(steps.size()), "step", "steps"));
  if (first && last) fmt::format_to(std::back_inserter(out), ", loss {:.4g} -> {:.4g}", *first, *last);
  out.push_back('\n');
}

void write_hints(fmt::memory_buffer& out, const std::vector<PerfHintRow>& hints, size_t top) {
  if (hints.empty()) return;
  const auto groups = analysis::group_perf_hints(hints);
  if (groups.size() == hints.size()) fmt::format_to(std::back_inserter(out), "\n  Perf hints ({})\n", hints.size());
  else fmt::format_to(std::back_inserter(out), "\n  Perf hints ({}, {} different)\n", hints.size(), groups.size());
  for (size_t i = 0; i < std::min(top, groups.size()); ++i) {
    const auto& h = groups[i];
    std::string times = h.count > 1 ? fmt::format(" x{}", h.count) : "";
    fmt::format_to(std::back_inserter(out), "{}", text::wrap("    ", fmt::format("{} {}{} {}", h.kind, h.op, times,
                                                           h.file.empty() ? "" : text::location(h.file, h.line))));
    fmt::format_to(std::back_inserter(out), "{}", text::wrap("      ", h.message));
  }
}

// Shown once per multi-rank job, under its lowest rank's run.
void write_divergence(fmt::memory_buffer& out, const analysis::RankDivergence& d, Id run_id) {
  if (d.ranks.empty() || d.ranks.front().run_id != run_id) return;
  std::string runs;
  for (const auto& r : d.ranks) runs += fmt::format("{}rank {} = run {}", runs.empty() ? "" : ", ", r.rank, r.run_id);
  if (d.items.empty()) {
    fmt::format_to(std::back_inserter(out), "\n  Ranks ({}): all compiled the same\n", runs);
    return;
  }
  fmt::format_to(std::back_inserter(out), "\n  Ranks diverge ({}): {}\n", runs,
                 text::plural(static_cast<int64_t>(d.items.size()), "difference", "differences"));
  for (const auto& item : d.items) {
    const char* what = analysis::divergence_what(item.kind);
    fmt::format_to(std::back_inserter(out), "{}", text::wrap(fmt::format("    {} {}: ", what, item.subject), item.detail));
    if (!item.reason.empty()) fmt::format_to(std::back_inserter(out), "{}", text::wrap("      because: ", item.reason));
  }
}

std::string render_text(const RunReader& reader, const std::vector<RunRow>& runs, size_t top) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "{}: {}\n", reader.path(),
                 text::plural(static_cast<int64_t>(reader.runs().size()), "run", "runs"));
  for (const auto& run : runs) {
    fmt::format_to(std::back_inserter(out), "\nRun {} · {} {} · {} · {}\n", run.id, run.command,
                   run.model_path.empty() ? "-" : run.model_path, run.started_at,
                   analysis::status_text(run));
    if (run.source == "torch_trace") {
      fmt::format_to(std::back_inserter(out), "  imported from PyTorch's TORCH_TRACE · PyTorch {} · device {} · rank {} of {}\n",
                     run.libtorch_version.empty() ? "-" : run.libtorch_version, run.device.empty() ? "-" : run.device,
                     run.rank, run.world_size);
    } else {
      fmt::format_to(std::back_inserter(out), "  stance {} · device {} · LibTorch {}\n",
                     run.stance.empty() ? "default" : run.stance, run.device.empty() ? "-" : run.device,
                     run.libtorch_version.empty() ? "-" : run.libtorch_version);
    }
    if (run.dropped_events > 0) {
      fmt::format_to(std::back_inserter(out), "  warning: {} events were not written\n", run.dropped_events);
    }
    write_counts(out, analysis::summarize_run(reader, run.id), run.source == "torch_trace");
    write_problems(out, analysis::find_problems(reader, run.id));
    write_breaks(out, analysis::break_sites(reader, run.id), top);
    write_recompiles(out, analysis::recompiles_with_failures(reader, run.id), top);
    write_compile_time(out, analysis::compile_time(reader, run.id), top);
    write_shape_advice_text(out, analysis::shape_advice(reader, run.id));
    write_kernels(out, analysis::kernel_stats(reader, run.id), top);  // GPU work first in a CUDA run
    write_steps(out, reader.steps(run.id));
    write_hints(out, reader.perf_hints(run.id), top);
    write_divergence(out, analysis::rank_divergence(reader, run.id), run.id);
  }
  return fmt::to_string(out);
}

nlohmann::json compile_time_json(const analysis::CompileTimeReport& t) {
  using nlohmann::json;
  auto stages = [](const std::array<int64_t, analysis::kCompileStages>& ns) {
    json j = json::object();
    for (int st = 0; st < analysis::kCompileStages; ++st) j[analysis::stage_name(static_cast<analysis::CompileStage>(st))] = ns[st];
    return j;
  };
  auto cache = [](const analysis::CacheCounts& c) {
    return json{{"fx_hits", c.fx_hits}, {"fx_misses", c.fx_misses}, {"aot_hits", c.aot_hits}, {"aot_misses", c.aot_misses}};
  };
  json compiles = json::array(), frames = json::array(), repeated = json::array();
  for (const auto& c : t.compiles) {
    compiles.push_back({{"compile", c.compile_label}, {"frame", c.frame}, {"total_ns", c.total_ns},
                        {"stages_ns", stages(c.stage_ns)}, {"cache", cache(c.cache)}});
  }
  for (const auto& f : t.frames) {
    frames.push_back({{"frame", f.frame}, {"compiles", f.compiles}, {"total_ns", f.total_ns}, {"stages_ns", stages(f.stage_ns)}});
  }
  for (const auto& r : t.repeated) {
    repeated.push_back({{"compiles", r.compile_labels}, {"frame", r.frame}, {"op_count", r.op_count},
                        {"total_ns", r.total_ns}, {"avoidable_ns", r.avoidable_ns}});
  }
  json blocks = json::array();
  for (const auto& b : t.blocks) {
    blocks.push_back({{"compile", b.compile_label}, {"frame", b.frame}, {"name", b.repeat.name},
                      {"copies", b.repeat.copies}, {"ops_per_copy", b.repeat.ops_per_copy},
                      {"graph_ops", b.repeat.graph_ops}, {"compile_ns", b.compile_ns},
                      {"after_dynamo_ns", b.after_dynamo_ns}, {"saving_ns", b.saving_ns}});
  }
  return {{"total_ns", t.total_ns}, {"stages_ns", stages(t.stage_ns)}, {"cache", cache(t.cache)},
          {"frames", frames}, {"compiles", compiles}, {"repeated_graphs", repeated}, {"repeated_blocks", blocks}};
}

nlohmann::json render_json(const RunReader& reader, const std::vector<RunRow>& runs, size_t top) {
  using nlohmann::json;
  json out = {{"db", reader.path()}, {"schema_version", reader.schema_version()}};
  json jruns = json::array();
  for (const auto& run : runs) {
    json j = json_rows::run(run);
    j["summary"] = json_rows::summary(analysis::summarize_run(reader, run.id));
    json problems = json::array();
    for (const auto& p : analysis::find_problems(reader, run.id)) {
      problems.push_back({{"kind", p.kind}, {"title", p.title}, {"detail", p.detail}, {"view", p.view}, {"score", p.score}});
    }
    j["problems"] = problems;
    json breaks = json::array();
    for (const auto& b : analysis::break_sites(reader, run.id)) breaks.push_back(json_rows::break_site(b));
    j["break_sites"] = breaks;
    json recompiles = json::array();
    for (const auto& r : analysis::recompiles_with_failures(reader, run.id)) recompiles.push_back(json_rows::recompile(r));
    j["recompiles"] = recompiles;
    j["compile_time"] = compile_time_json(analysis::compile_time(reader, run.id));
    j["shape_advice"] = shape_advice_json(analysis::shape_advice(reader, run.id));
    json kernels = json::array();
    auto stats = analysis::kernel_stats(reader, run.id);
    for (size_t i = 0; i < std::min(top, stats.size()); ++i) kernels.push_back(json_rows::kernel_stats(stats[i]));
    j["kernels"] = kernels;
    json steps = json::array();
    for (const auto& s : reader.steps(run.id)) {
      steps.push_back({{"step", s.step}, {"duration_ns", s.duration_ns},
                       {"loss", s.loss ? json(*s.loss) : json(nullptr)}});
    }
    j["steps"] = steps;
    json hints = json::array();
    for (const auto& h : reader.perf_hints(run.id)) hints.push_back(json_rows::perf_hint(h));
    j["perf_hints"] = hints;
    auto divergence = analysis::rank_divergence(reader, run.id);
    if (!divergence.ranks.empty()) {
      json items = json::array();
      for (const auto& d : divergence.items) {
        items.push_back({{"kind", d.kind}, {"subject", d.subject}, {"detail", d.detail}, {"reason", d.reason}});
      }
      j["rank_divergence"] = items;
      json ranks = json::array();
      for (const auto& r : divergence.ranks) {
        ranks.push_back({{"rank", r.rank}, {"run_id", r.run_id}, {"status", r.status}, {"frames", r.frames},
                         {"compiles", r.compiles}, {"recompiles", r.recompiles}, {"graph_breaks", r.graph_breaks}});
      }
      j["ranks"] = ranks;
    }
    jruns.push_back(std::move(j));
  }
  out["runs"] = jruns;
  return out;
}

std::string render_kernels_text(const RunReader& reader, const std::vector<RunRow>& runs, size_t top) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "{}: {}\n", reader.path(),
                 text::plural(static_cast<int64_t>(reader.runs().size()), "run", "runs"));
  for (const auto& run : runs) {
    write_kernel_report_header(out, run);
    write_kernel_report(out, reader, run.id, top);
  }
  return fmt::to_string(out);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report", "Summarise the runs recorded in a tcprof database");
  cmd->add_option("DB", o->db, "Database written by tcprof run/train/explain (also --db)");
  cmd->add_option("--db", o->db, "Database to read");
  cmd->add_option("--run", o->run_id, "Only this run id (default: every run in the file)");
  cmd->add_option("--top", o->top, "How many items to list per section")->capture_default_str();
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->add_flag("--kernels", o->kernels,
                "Kernel table (time %, total, instances, avg, median, min, max, stddev) and each "
                "graph's time by kind");
  cmd->callback([o] {
    if (o->db.empty()) throw Error(ErrorKind::Usage, "report: give the database to read (tcprof report RUN.db)");
    RunReader reader(o->db);
    auto runs = selected_runs(reader, *o);
    if (o->json && o->kernels) {
      auto j = render_json(reader, runs, o->top);
      for (size_t i = 0; i < runs.size(); ++i) j["runs"][i]["kernel_report"] = kernel_report_json(reader, runs[i].id);
      std::cout << j.dump(2) << "\n";
    } else if (o->json) {
      std::cout << render_json(reader, runs, o->top).dump(2) << "\n";
    } else if (o->kernels) {
      std::cout << render_kernels_text(reader, runs, o->top);
    } else {
      std::cout << render_text(reader, runs, o->top);
    }
  });
}

}  // namespace tcprof::cli
