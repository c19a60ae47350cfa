// `tcprof check (MODEL --input ... | DB) --baseline FILE`: the CI gate. With a model it runs the
// workload like `tcprof run` and records it; either way the verdict comes from the database, so a
// recorded run and a fresh one are judged by the same code (gate.h).
#include <algorithm>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <optional>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <torch/csrc/jit/runtime/print_handler.h>

#include "analysis/gate.h"
#include "analysis/rank_divergence.h"
#include "analysis/source_index.h"
#include "cli/baseline.h"
#include "cli/commands.h"
#include "cli/gate_format.h"
#include "importers/trace_import.h"
#include "cli/model_command.h"
#include "cli/progress.h"
#include "cli/text_format.h"
#include "compiler/runtime/compiled_module.h"
#include "core/error.h"
#include "core/run_reader.h"

namespace tcprof::cli {
namespace {

using namespace tcprof::analysis;

struct CheckOptions {
  ModelOptions model;  // model.model is the MODEL or the DB
  int64_t iters = 10;
  std::string baseline;
  bool update_baseline = false;
  std::string format = "text";
  std::optional<int64_t> max_graph_breaks, max_recompiles;
  std::optional<double> max_compile_seconds;
  std::optional<int64_t> run_id;
  std::string rank;  // --rank N|all: which ranks of a multi-rank import to judge
};

bool is_sqlite_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  return in.gcount() == 16 && std::string(header, 15) == "SQLite format 3";
}

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789_-+=/.,:@%") == std::string::npos) {
    return arg;
  }
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The user's own command line with --update-baseline instead of an output format: the exact
// command that locks an improvement in.
std::string update_command(const CheckOptions& o) {
  std::vector<std::string> args;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
  if (args.empty()) {
    args = {"tcprof", "check", o.model.model, "--baseline", o.baseline};
    for (const auto& i : o.model.inputs) args.insert(args.end(), {"--input", i});
  }
  std::string out = file_basename(args[0]) == "tcprof" ? "tcprof" : shell_quote(args[0]);
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--update-baseline" || a.rfind("--format=", 0) == 0 || a == "--json") continue;
    if (a == "--format") {
      ++i;
      continue;
    }
    out += " " + shell_quote(a);
  }
  return out + " --update-baseline";
}

// --rank N|all on a multi-rank import: the run of rank N, or every rank's, of the job `run_id` is in.
std::vector<Id> runs_of_rank(const RunReader& reader, Id run_id, const std::string& rank) {
  std::vector<RankRun> ranks = rank_divergence(reader, run_id).ranks;
  if (ranks.empty()) {
    auto row = reader.run(run_id);
    RankRun self;
    self.rank = row ? row->rank : 0;
    self.run_id = run_id;
    ranks.push_back(self);
  }
  if (rank == "all") {
    std::vector<Id> out;
    for (const auto& r : ranks) out.push_back(r.run_id);
    return out;
  }
  char* end = nullptr;
  long wanted = std::strtol(rank.c_str(), &end, 10);
  if (rank.empty() || *end != '\0') throw Error(ErrorKind::Usage, fmt::format("--rank takes a number or 'all', not '{}'", rank));
  std::string have;
  for (const auto& r : ranks) {
    if (r.rank == wanted) return {r.run_id};
    have += (have.empty() ? "" : ", ") + std::to_string(r.rank);
  }
  throw Error(ErrorKind::Usage, fmt::format("no rank {} in this job (ranks: {})", wanted, have));
}

// Runs the workload like `tcprof run` and returns the run's id in s.db_path.
Id run_workload(const CheckOptions& o, ModelSession& s) {
  // The model's print() must not end up inside JSON or JUnit on stdout.
  send_model_output_to_stderr();
  CompiledModule m(s.model, s.compile, s.writer.get(), s.profiler.get());
  Id run_id = s.writer->run_id();
  ProgressBar bar("check", o.iters);
  try {
    for (int64_t i = 0; i < o.iters; ++i) {
      m.call(s.inputs->make(i));
      bar.update(i + 1, fmt::format("{} recompiles", m.stats().recompiles));
    }
  } catch (const Error& e) {
    bar.finish();
    fail_session(s, e);
  }
  bar.finish();
  finish_session(s);
  return run_id;
}

// Under --db none the gate still reads the run back from a database: a temporary one, removed
// when the check is done.
class TemporaryDatabase {
 public:
  TemporaryDatabase()
      : path_((std::filesystem::temp_directory_path() / fmt::format("tcprof-check-{}.db", getpid())).string()) {}
  ~TemporaryDatabase() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Differences between the workload the baseline was recorded with and this one: counts only
// compare under the same inputs and call count.
std::vector<std::string> workload_differences(const nlohmann::json& before, const nlohmann::json& now) {
  std::vector<std::string> out;
  for (const auto& [key, value] : before.items()) {
    if (now.contains(key) && now[key] != value) {
      out.push_back(fmt::format("{} {} (baseline) vs {}", key, value.dump(), now[key].dump()));
    }
  }
  return out;
}

void check(CheckOptions o) {
  if (o.model.json && o.format == "text") o.format = "json";
  static const std::vector<std::string> formats = {"text", "json", "junit", "github"};
  if (std::find(formats.begin(), formats.end(), o.format) == formats.end()) {
    throw Error(ErrorKind::Usage, fmt::format("unknown --format '{}' (use text, json, junit or github)", o.format));
  }
  if (o.iters < 1) throw Error(ErrorKind::Usage, "--iters must be at least 1");
  if (o.update_baseline && o.baseline.empty()) throw Error(ErrorKind::Usage, "--update-baseline needs --baseline FILE");
  if (o.baseline.empty() && !o.max_graph_breaks && !o.max_recompiles && !o.max_compile_seconds) {
    throw Error(ErrorKind::Usage, "check: give --baseline FILE, --max-graph-breaks N, --max-recompiles N or --max-compile-seconds S");
  }
  // Read the baseline first: a missing or broken one fails in a second, not after the run.
  std::optional<Baseline> baseline;
  if (!o.baseline.empty() && !o.update_baseline) baseline = load_baseline(o.baseline);

  std::string db_path;
  std::optional<TemporaryDatabase> temporary;
  std::optional<Id> run_id = o.run_id;
  if (is_sqlite_file(o.model.model)) {
    db_path = o.model.model;
  } else if (import::looks_like_torch_trace(o.model.model)) {
    // A PyTorch TORCH_TRACE log or folder: imported on the fly, so CI is one line after
    // `TORCH_TRACE=DIR python train.py`. --db keeps the import; by default it is temporary.
    if (o.run_id) throw Error(ErrorKind::Usage, "--run selects a run in a database; a log is imported as new runs");
    if (o.model.db.empty() || o.model.db == "none") {
      temporary.emplace();
      o.model.db = temporary->path();
    }
    import::ImportResult imported = import::import_traces({{o.model.model}, {}, o.model.db});
    for (const auto& w : imported.warnings) std::cerr << "tcprof: warning: " << w << "\n";
    if (!imported.errors.empty()) throw Error(ErrorKind::Input, imported.errors.front());
    if (imported.runs.empty()) throw Error(ErrorKind::Input, fmt::format("'{}' holds no compiles to check", o.model.model));
    db_path = o.model.db;
    run_id = imported.runs.back().run_id;
  } else {
    if (o.run_id) throw Error(ErrorKind::Usage, "--run selects a run in a database; MODEL records a new one");
    if (o.model.db == "none") {
      temporary.emplace();
      o.model.db = temporary->path();
    }
    ModelSession s = open_model_session(o.model, "check",
                                        config_json(o.model, fmt::format("{{\"iters\":{}}}", o.iters)));
    run_id = run_workload(o, s);
    db_path = s.db_path;
  }
  RunReader reader(db_path);
  std::vector<Id> judged{resolve_run(reader, run_id)};
  if (!o.rank.empty()) judged = runs_of_rank(reader, judged.front(), o.rank);
  if (judged.size() > 1 && (o.update_baseline || o.format == "json" || o.format == "junit")) {
    throw Error(ErrorKind::Usage, "--rank all gives one verdict per rank: use --format text or github, and "
                                  "update a baseline from one rank (--rank N)");
  }
  int64_t regressions = 0;
  for (Id judged_id : judged) {
    RunView run = view_run(reader, judged_id);
    if (judged.size() > 1) std::cout << fmt::format("rank {} (run {}):\n", run.run.rank, run.run_id);
    if (o.update_baseline) {
      Baseline b = baseline_from_run(run);
      save_baseline(b, o.baseline);
      int64_t sites = 0, recompiles = 0, eager = 0;
      for (const auto& f : b.frames) {
        sites += static_cast<int64_t>(f.breaks.size());
        recompiles += f.recompiles;
        eager += f.eager_fallbacks;
      }
      std::cout << fmt::format("Wrote baseline {}\n  {}, {}, {}, {}\n  from run {} in {}\n", o.baseline,
                               text::plural(static_cast<int64_t>(b.frames.size()), "frame", "frames"),
                               text::plural(sites, "break site", "break sites"),
                               text::plural(recompiles, "recompile", "recompiles"),
                               text::plural(eager, "eager fallback", "eager fallbacks"), run.run_id,
                               temporary ? "a temporary database, now removed (--db FILE keeps the run)" : db_path);
      continue;
    }
    if (baseline) {
      nlohmann::json now = baseline_from_run(run).workload;
      for (const auto& d : workload_differences(baseline->workload, now)) {
        std::cerr << "tcprof: warning: different workload than the baseline's: " << d << "\n";
      }
    }
    GateResult result = evaluate_gate(run, baseline ? &*baseline : nullptr,
                                      GateLimits{o.max_graph_breaks, o.max_recompiles, o.max_compile_seconds},
                                      SourceIndex::of_run(reader, run.run_id));
    GateContext context{o.baseline, temporary ? std::string() : db_path, run.run.model_path.empty() ? o.model.model : run.run.model_path,
                        update_command(o)};
    if (o.format == "json") {
      std::cout << gate_json(result, context).dump(2) << "\n";
    } else if (o.format == "junit") {
      std::cout << gate_junit(result, context);
    } else if (o.format == "github") {
      std::cout << gate_github(result, context);
    } else {
      std::cout << gate_text(result, context);
    }
    std::cout.flush();
    regressions += result.regressions();
  }
  if (regressions > 0) {
    throw Error(ErrorKind::Check,
                fmt::format("check failed: {} against {}", text::plural(regressions, "regression", "regressions"),
                            o.baseline.empty() ? "the limits" : o.baseline));
  }
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto o = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand(
      "check", "CI gate: run a model (or read a run database) and compare with a committed baseline");
  add_model_options(cmd, o->model, true);
  cmd->get_option("model")->description(
      "TorchScript archive to run, a run database (.db) to judge, or a PyTorch TORCH_TRACE log or folder to import and judge");
  cmd->add_option("--iters,-n", o->iters, "Calls to run (MODEL only)")->capture_default_str();
  cmd->add_option("--baseline", o->baseline, "Baseline JSON to compare with (or write, with --update-baseline)");
  cmd->add_flag("--update-baseline", o->update_baseline, "Write the baseline from this run instead of comparing");
  cmd->add_option("--format", o->format, "text, json, junit or github")->capture_default_str();
  cmd->add_option("--max-graph-breaks", o->max_graph_breaks, "Fail when the run has more graph breaks");
  cmd->add_option("--max-recompiles", o->max_recompiles, "Fail when the run has more recompiles");
  cmd->add_option("--max-compile-seconds", o->max_compile_seconds,
                  "Fail when any frame's compiles together take longer (a compile-time budget per frame)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--run", o->run_id, "Run id in DB (default: the newest)");
  cmd->add_option("--rank", o->rank, "Multi-rank import: judge rank N, or all ranks (one verdict each)");
  cmd->callback([o] { check(*o); });
}

}  // namespace tcprof::cli
