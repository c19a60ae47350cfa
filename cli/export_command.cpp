// `tcprof export DB --chrome trace.json [--run ID]`: a Chrome/Perfetto trace of recorded runs.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "core/run_reader.h"
#include "profiler/chrome_trace.h"

namespace tcprof::cli {
namespace {

struct ExportOptions {
  std::string db;
  std::string chrome;
  std::optional<int64_t> run_id;
  bool json = false;
};

void run_export(const ExportOptions& o) {
  if (o.db.empty()) throw Error(ErrorKind::Usage, "export: give the database to read (tcprof export RUN.db --chrome trace.json)");
  if (o.chrome.empty()) throw Error(ErrorKind::Usage, "export: say what to write (--chrome trace.json)");
  RunReader reader(o.db);
  std::vector<Id> ids;
  for (const auto& r : reader.runs()) {
    if (!o.run_id || r.id == *o.run_id) ids.push_back(r.id);
  }
  if (o.run_id && ids.empty()) {
    throw Error(ErrorKind::Usage, fmt::format("'{}' has no run {}", o.db, *o.run_id));
  }
  std::ofstream out(o.chrome, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::Input, fmt::format("cannot write '{}'", o.chrome));
  ChromeTraceStats stats = write_chrome_trace(reader, ids, out);
  out.close();
  if (!out) throw Error(ErrorKind::Input, fmt::format("writing '{}' failed (disk full?)", o.chrome));
  if (o.json) {
    std::cout << nlohmann::json{{"chrome", o.chrome}, {"runs", ids.size()}, {"events", stats.events},
                                {"slices", stats.slices}, {"flows", stats.flows},
                                {"tracks", stats.tracks}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << fmt::format("wrote {} ({} events: {} slices, {} flow arrows, {} tracks) -- open it "
                             "in https://ui.perfetto.dev or chrome://tracing\n",
                             o.chrome, stats.events, stats.slices, stats.flows, stats.tracks);
  }
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export", "Export recorded runs (Chrome/Perfetto trace JSON)");
  cmd->add_option("DB", o->db, "Database written by tcprof run/train (also --db)");
  cmd->add_option("--db", o->db, "Database to read");
  cmd->add_option("--chrome", o->chrome, "Write a Chrome Trace Event JSON file here");
  cmd->add_option("--run", o->run_id, "Only this run id (default: every run in the file)");
  cmd->add_flag("--json", o->json, "Machine-readable summary of what was written");
  cmd->callback([o] { run_export(*o); });
}

}  // namespace tcprof::cli
