// `tcprof import PATH... [--kineto TRACE.json[.gz]]... [--db OUT.db] [--json]`: PyTorch's own
// torch.compile logs (TORCH_TRACE) and profiler traces into a run database, so report, check,
// diff, export and the GUI work for Python users. Exit 2 when an input is not usable at all;
// damage inside a log is reported and the rest imported.
// `tcprof import --follow DIR [--kineto-dir DIR]`: the same for a job still running, as it writes.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/break_sites.h"
#include "cli/commands.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/run_reader.h"
#include "importers/trace_follow.h"
#include "importers/trace_import.h"

namespace tcprof::cli {
namespace {

struct ImportOptions {
  std::vector<std::string> paths, kineto;
  std::string db;
  bool json = false;
  std::string follow, kineto_dir;
  int poll_ms = 200;
};

// ./tcprof-runs/<first input's name>-<date-time>.db, like the commands that record.
std::string default_db(const std::string& first) {
  std::string stem = std::filesystem::path(first).filename().string();
  for (const char* ext : {".gz", ".json", ".log"}) {
    if (stem.size() > std::strlen(ext) && stem.compare(stem.size() - std::strlen(ext), std::strlen(ext), ext) == 0) {
      stem.resize(stem.size() - std::strlen(ext));
    }
  }
  if (stem.empty()) stem = "torch_trace";
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::filesystem::create_directories("tcprof-runs");
  return fmt::format("tcprof-runs/{}-{}.db", stem, stamp);
}

void print_result(const ImportOptions& o, const import::ImportResult& result) {
  for (const auto& w : result.warnings) std::cerr << "tcprof: warning: " << w << "\n";

  nlohmann::json runs = nlohmann::json::array();
  std::optional<RunReader> reader;
  if (!result.runs.empty()) reader.emplace(result.db);
  for (const auto& r : result.runs) {
    int64_t sites = static_cast<int64_t>(analysis::break_sites(*reader, r.run_id).size());
    runs.push_back({{"run_id", r.run_id}, {"trace", r.trace}, {"rank", r.rank}, {"world_size", r.world_size},
                    {"pytorch_version", r.pytorch_version}, {"frames", r.frames}, {"compiles", r.compiles},
                    {"compiles_incomplete", r.compiles_incomplete}, {"graph_breaks", r.graph_breaks},
                    {"break_sites", sites}, {"recompiles", r.recompiles}, {"guard_failures", r.guard_failures},
                    {"graphs", r.graphs}, {"guards", r.guards}, {"kernels", r.kernels},
                    {"damaged_records", r.damaged_records}, {"unknown_records", r.unknown_records},
                    {"db", result.db}});
    if (!o.json) {
      auto n = [](int64_t count, const char* one, const char* many) {
        return fmt::format("{} {}", count, count == 1 ? one : many);
      };
      std::cout << fmt::format(
          "Imported {} as run {} (PyTorch {}, rank {}{}):\n  {}, {} ({} incomplete), {} at {}, {} ({}), {}, "
          "{}, {}\n",
          r.trace, r.run_id, r.pytorch_version.empty() ? "version unknown" : r.pytorch_version, r.rank,
          r.world_size > 1 ? fmt::format(" of {}", r.world_size) : "", n(r.frames, "frame", "frames"),
          n(r.compiles, "compile", "compiles"), r.compiles_incomplete, n(r.graph_breaks, "graph break", "graph breaks"),
          n(sites, "site", "sites"), n(r.recompiles, "recompile", "recompiles"),
          n(r.guard_failures, "guard failure", "guard failures"), n(r.graphs, "graph", "graphs"),
          n(r.guards, "guard", "guards"), n(r.kernels, "kernel", "kernels"));
      if (r.damaged_records + r.unknown_records > 0) {
        std::cout << fmt::format("  skipped: {} damaged records, {} of unknown kinds\n", r.damaged_records, r.unknown_records);
      }
    }
  }
  if (o.json) {
    nlohmann::json out{{"db", result.db}, {"runs", runs}, {"warnings", result.warnings}, {"errors", result.errors},
                     {"kineto", result.notes}};
    std::cout << out.dump(2) << "\n";
  } else if (!result.runs.empty()) {
    for (const auto& note : result.notes) std::cout << "Kineto " << note << "\n";
    std::cout << fmt::format("Recorded in {}\n  next: tcprof report {}   |   tcprof check {} --baseline FILE\n", result.db,
                             result.db, result.db);
  }
  std::cout.flush();
  if (!result.errors.empty()) {
    std::string message = result.errors.front();
    for (size_t i = 1; i < result.errors.size(); ++i) message += "\n  " + result.errors[i];
    if (!result.runs.empty()) message += fmt::format("\n  (what could be read is in {})", result.db);
    throw Error(ErrorKind::Input, message);
  }
}

void run_import(ImportOptions o) {
  if (o.paths.empty() && o.kineto.empty()) throw Error(ErrorKind::Usage, "import: give a TORCH_TRACE file or folder, or --kineto TRACE.json");
  import::ImportRequest request{o.paths, o.kineto, o.db.empty() ? default_db(o.paths.empty() ? o.kineto.front() : o.paths.front()) : o.db};
  print_result(o, import::import_traces(request));
}

// Polls until the job's processes have all exited (then reads the rest) or until Ctrl-C.
void run_follow(ImportOptions o) {
  if (!o.paths.empty() || !o.kineto.empty()) {
    throw Error(ErrorKind::Usage, "import --follow DIR takes no other logs or --kineto files: use --kineto-dir for the "
                                  "profiler's output folder");
  }
  std::error_code ec;
  if (std::filesystem::exists(o.follow, ec) && !std::filesystem::is_directory(o.follow, ec)) {
    throw Error(ErrorKind::Usage, fmt::format("import --follow wants the job's TORCH_TRACE folder; '{}' is a file "
                                              "(tcprof import {} reads a finished log)", o.follow, o.follow));
  }
  const std::string db = o.db.empty() ? default_db(o.follow) : o.db;
  import::TraceFollower follower({o.follow, o.kineto_dir, db});

  // Ctrl-C: the watcher thread asks the loop to stop and waits for it to close the runs; the
  // process then exits 130 as every interrupted command does.
  std::atomic<bool> stop{false};
  std::mutex m;
  std::condition_variable cv;
  bool closed = false;
  interrupt::Registration on_interrupt([&](int) {
    stop = true;
    std::unique_lock<std::mutex> lock(m);
    cv.wait_for(lock, std::chrono::seconds(30), [&] { return closed; });
  });
  // Destroyed before on_interrupt, on every way out (a throw included): lets the watcher go on.
  struct ReleaseWatcher {
    std::mutex& m;
    std::condition_variable& cv;
    bool& closed;
    ~ReleaseWatcher() {
      std::lock_guard<std::mutex> lock(m);
      closed = true;
      cv.notify_all();
    }
  } release{m, cv, closed};
  std::cerr << fmt::format("tcprof: following {}{} into {} (ends when the job exits, or Ctrl-C)\n", o.follow,
                           o.kineto_dir.empty() ? "" : " and " + o.kineto_dir, db);
  bool ended = false;
  while (!stop) {
    follower.poll();
    if (follower.job_ended()) {
      ended = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(o.poll_ms));
  }
  print_result(o, follower.finish(!ended));
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto o = std::make_shared<ImportOptions>();
  auto* cmd = app.add_subcommand(
      "import", "Import PyTorch TORCH_TRACE logs (file, folder of ranks, .gz) and torch.profiler traces into a run database");
  cmd->add_option("path", o->paths, "TORCH_TRACE log file, .gz, or folder of dedicated_log_torch_trace_rank_N_*.log");
  cmd->add_option("--kineto", o->kineto, "torch.profiler Chrome trace (.json or .json.gz) of the same job; repeatable (one per rank)");
  cmd->add_option("--db", o->db, "Run database to write (default: ./tcprof-runs/<name>-<date-time>.db)");
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->add_option("--follow", o->follow,
                  "A running job's TORCH_TRACE folder: import as it is written until the job exits (or Ctrl-C); "
                  "tcprof-gui shows the run live");
  cmd->add_option("--kineto-dir", o->kineto_dir,
                  "With --follow: torch.profiler's output folder (tensorboard_trace_handler), one trace per step");
  cmd->add_option("--poll-ms", o->poll_ms, "With --follow: how often to look for new lines")->check(CLI::Range(10, 10000));
  cmd->callback([o] {
    if (!o->follow.empty()) run_follow(*o);
    else if (!o->kineto_dir.empty()) throw Error(ErrorKind::Usage, "import: --kineto-dir goes with --follow DIR");
    else run_import(*o);
  });
}

}  // namespace tcprof::cli
