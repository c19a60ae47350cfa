#include "core/schema.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/sqlite_db.h"

namespace tcprof {
namespace {

// Ids of referenced entities are assigned by the writer (see events.h); the rest are rowids.
constexpr const char* kSchemaV1Sql = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, command TEXT NOT NULL,
  model_path TEXT, model_sha256 TEXT, stance TEXT, config_json TEXT, libtorch_version TEXT,
  device TEXT, status TEXT NOT NULL, host TEXT, pid INTEGER, dropped_events INTEGER DEFAULT 0);
CREATE TABLE frames(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, name TEXT, module_path TEXT, file TEXT,
  line INTEGER);
CREATE TABLE compiles(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, frame_id INTEGER, compile_id TEXT, reason TEXT,
  start_ns INTEGER, duration_ns INTEGER, status TEXT, cache_hit INTEGER);
CREATE TABLE compile_phases(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, compile_id INTEGER, phase TEXT,
  start_ns INTEGER, duration_ns INTEGER);
CREATE TABLE graphs(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, compile_id INTEGER, op_count INTEGER, ir TEXT,
  code TEXT);
CREATE TABLE graph_breaks(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, compile_id INTEGER, type TEXT, break_id TEXT,
  op TEXT, reason TEXT, hint TEXT, file TEXT, line INTEGER, col INTEGER, source TEXT,
  module_path TEXT, stack_json TEXT);
CREATE TABLE guards(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, compile_id INTEGER, kind TEXT, expr TEXT,
  file TEXT, line INTEGER);
CREATE TABLE guard_failures(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, call_id INTEGER, compile_id INTEGER,
  guard_id INTEGER, expected TEXT, actual TEXT, message TEXT);
CREATE TABLE recompiles(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, frame_id INTEGER, compile_id INTEGER,
  reason TEXT, cache_size INTEGER, call_id INTEGER);
CREATE TABLE calls(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, frame_id INTEGER, compile_id INTEGER,
  start_ns INTEGER, duration_ns INTEGER, path TEXT, input_shapes TEXT);
CREATE TABLE kernels(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, call_id INTEGER, graph_id INTEGER, name TEXT,
  kind TEXT, device TEXT, stream INTEGER, start_ns INTEGER, duration_ns INTEGER, grid TEXT,
  block TEXT, correlation_id INTEGER);
CREATE TABLE steps(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, step INTEGER, start_ns INTEGER,
  duration_ns INTEGER, loss REAL);
CREATE TABLE perf_hints(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, compile_id INTEGER, kind TEXT, op TEXT,
  message TEXT, file TEXT, line INTEGER);

-- kernels has no index on purpose: an index halves the insert rate, and readers scan a run's
-- kernels once (timeline, aggregates) rather than seeking into them.
CREATE INDEX calls_by_run ON calls(run_id, start_ns);
CREATE INDEX breaks_by_run ON graph_breaks(run_id);
CREATE INDEX compiles_by_run ON compiles(run_id);
CREATE INDEX guards_by_compile ON guards(compile_id);
CREATE INDEX failures_by_run ON guard_failures(run_id);
)sql";

// Tables added by schema version 2. IF NOT EXISTS: the same text creates them in new files and
// adds them to version-1 files a writer opens (older readers keep reading those files' v1 tables).
constexpr const char* kSchemaV2Sql = R"sql(
CREATE TABLE IF NOT EXISTS kernel_summaries(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, call_id INTEGER, graph_id INTEGER, name TEXT,
  kind TEXT, device TEXT, stream INTEGER, start_ns INTEGER, end_ns INTEGER, count INTEGER,
  total_ns INTEGER, min_ns INTEGER, max_ns INTEGER, sum_sq_ns2 REAL);
CREATE TABLE IF NOT EXISTS run_counters(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, name TEXT NOT NULL, value INTEGER);
)sql";

// Version 3: imported runs (PyTorch TORCH_TRACE logs, Kineto traces) and the user's sources.
// Columns are added to older files in place; rows written before keep the defaults, which are
// what those runs were (recorded by tcprof, one process, no restarts, captured graphs).
constexpr const char* kSchemaV3Sql = R"sql(
ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'tcprof';
ALTER TABLE runs ADD COLUMN rank INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN world_size INTEGER NOT NULL DEFAULT 1;
ALTER TABLE compiles ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE graphs ADD COLUMN kind TEXT NOT NULL DEFAULT 'captured';
ALTER TABLE graphs ADD COLUMN fx_key TEXT;
CREATE TABLE IF NOT EXISTS sources(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, file TEXT NOT NULL, sha256 TEXT NOT NULL,
  text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS sources_by_run ON sources(run_id, file);
)sql";

// Version 4: when a run last committed events, so a reader can say when an interrupted run stopped.
constexpr const char* kSchemaV4Sql = R"sql(
ALTER TABLE runs ADD COLUMN last_event_at TEXT;
)sql";

// Version 5: what GPU runs need to explain a graph's GPU time: the bytes of each copy and fill,
// and the CUDA caching allocator's peak per call; and a training step split into its phases.
constexpr const char* kSchemaV5Sql = R"sql(
ALTER TABLE kernels ADD COLUMN bytes INTEGER;
ALTER TABLE kernel_summaries ADD COLUMN bytes INTEGER;
ALTER TABLE calls ADD COLUMN peak_gpu_bytes INTEGER;
ALTER TABLE steps ADD COLUMN forward_ns INTEGER;
ALTER TABLE steps ADD COLUMN backward_ns INTEGER;
ALTER TABLE steps ADD COLUMN optimizer_ns INTEGER;
)sql";

// Version 6: kernel names are stored demangled; the mangled name a CUDA kernel was reported under
// stays in its own column (NULL when the name was not mangled).
constexpr const char* kSchemaV6Sql = R"sql(
ALTER TABLE kernels ADD COLUMN mangled_name TEXT;
ALTER TABLE kernel_summaries ADD COLUMN mangled_name TEXT;
)sql";

bool has_table(Database& db, const char* name) {
  auto st = db.prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?");
  st.bind(1, name);
  return st.step();
}

int table_count(Database& db) {
  auto st = db.prepare("SELECT count(*) FROM sqlite_master WHERE type='table'");
  st.step();
  return static_cast<int>(st.int64(0));
}

// Reading sqlite_master is the first access to the file: a file that is not SQLite fails here.
int read_version(Database& db) {
  int tables = 0;
  try {
    tables = table_count(db);
  } catch (const Error&) {
    throw Error(ErrorKind::Input,
                fmt::format("'{}' is not a tcprof database: not an SQLite file", db.path()));
  }
  if (tables == 0) return 0;
  if (!has_table(db, "meta")) {
    throw Error(ErrorKind::Input,
                fmt::format("'{}' is an SQLite file but not a tcprof database (no meta table)",
                            db.path()));
  }
  auto st = db.prepare("SELECT value FROM meta WHERE key='schema_version'");
  if (!st.step()) {
    throw Error(ErrorKind::Input,
                fmt::format("'{}' is not a tcprof database (meta has no schema_version)", db.path()));
  }
  int version = std::atoi(st.text(0).c_str());
  if (version > kSchemaVersion) {
    throw Error(ErrorKind::Input,
                fmt::format("'{}' has schema version {}, newer than this tcprof understands ({}): "
                            "upgrade tcprof to read it",
                            db.path(), version, kSchemaVersion));
  }
  if (version < 1 || !has_table(db, "runs") || !has_table(db, "kernels")) {
    throw Error(ErrorKind::Input,
                fmt::format("'{}' has a damaged tcprof schema (version {})", db.path(), version));
  }
  return version;
}

}  // namespace

int validate_schema(Database& db) {
  int version = read_version(db);
  if (version == 0) {
    throw Error(ErrorKind::Input, fmt::format("'{}' is empty: it holds no tcprof runs", db.path()));
  }
  return version;
}

void create_or_validate_schema(Database& db) {
  if (read_version(db) == kSchemaVersion) return;
  // Under the write lock (BEGIN IMMEDIATE) read again: another process may have created or
  // upgraded the file since, and each step below must run exactly once.
  Transaction tx(db);
  int version = read_version(db);
  if (version == kSchemaVersion) return;
  if (version == 0) {
    db.exec(kSchemaV1Sql);
    auto st = db.prepare("INSERT INTO meta(key, value) VALUES (?, ?)");
    st.bind(1, "schema_version").bind(2, "1").run();
    st.bind(1, "created_by").bind(2, "tcprof").run();
  }
  if (version < 2) db.exec(kSchemaV2Sql);
  if (version < 3) db.exec(kSchemaV3Sql);
  if (version < 4) db.exec(kSchemaV4Sql);
  if (version < 5) db.exec(kSchemaV5Sql);
  if (version < 6) db.exec(kSchemaV6Sql);
  auto st = db.prepare("UPDATE meta SET value=? WHERE key='schema_version'");
  const std::string version_text = std::to_string(kSchemaVersion);
  st.bind(1, version_text).run();
  tx.commit();
}

void delete_run(Database& db, int64_t run_id) {
  // Every table with a run_id column: the v1 tables and those later versions added.
  static const char* const kRunTables[] = {"frames",      "compiles",         "compile_phases", "graphs",
                                           "graph_breaks", "guards",          "guard_failures", "recompiles",
                                           "calls",       "kernels",          "steps",          "perf_hints",
                                           "kernel_summaries", "run_counters", "sources"};
  db.exec("BEGIN IMMEDIATE");
  try {
    for (const char* table : kRunTables) {
      if (!has_table(db, table)) continue;
      db.prepare(fmt::format("DELETE FROM {} WHERE run_id=?", table)).bind(1, run_id).run();
    }
    db.prepare("DELETE FROM runs WHERE id=?").bind(1, run_id).run();
    db.exec("COMMIT");
  } catch (...) {
    db.exec("ROLLBACK");
    throw;
  }
}

}  // namespace tcprof
