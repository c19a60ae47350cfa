#include "core/run_reader.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.h"
#include "core/kernel_name.h"
#include "core/schema.h"
#include "core/sqlite_db.h"

namespace tcprof {
namespace {

int64_t count_of(Database& db, const char* sql, Id run_id) {
  auto st = db.prepare(sql);
  st.bind(1, run_id);
  return st.step() ? st.int64(0) : 0;
}

// Names of files written before schema 6 were stored as CUPTI reported them: demangled here, once
// per distinct name, with the original kept as the row's mangled name.
class KernelNameReader {
 public:
  void read(std::string_view stored, std::string& name, std::string& mangled) {
    if (!looks_mangled(stored)) {
      name.assign(stored);
      return;
    }
    auto it = demangled_.find(std::string(stored));
    if (it == demangled_.end()) it = demangled_.emplace(std::string(stored), demangled_kernel_name(stored)).first;
    name = it->second;
    if (mangled.empty()) mangled.assign(stored);
  }

 private:
  std::unordered_map<std::string, std::string> demangled_;
};

}  // namespace

RunReader::RunReader(const std::string& path) : path_(path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw Error(ErrorKind::Input, fmt::format("database '{}' does not exist", path));
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw Error(ErrorKind::Input, fmt::format("'{}' is a directory, not a tcprof database", path));
  }
  db_ = std::make_unique<Database>(path, Database::Mode::ReadOnly);
  schema_version_ = validate_schema(*db_);
}

RunReader::~RunReader() = default;

namespace {
constexpr const char* kRunColumns =
    "id, started_at, coalesce(finished_at,''), command, coalesce(model_path,''), "
    "coalesce(model_sha256,''), coalesce(stance,''), coalesce(config_json,''), "
    "coalesce(libtorch_version,''), coalesce(device,''), status, coalesce(dropped_events,0)";
// Columns of schema 3; older files get the values their runs had (tcprof's own, one process).
constexpr const char* kRunColumnsV3 = ", source, rank, world_size";
constexpr const char* kRunColumnsV2 = ", 'tcprof', 0, 1";
constexpr const char* kRunColumnsV4 = ", coalesce(host,''), coalesce(pid,0), coalesce(last_event_at,'')";
constexpr const char* kRunColumnsV1 = ", coalesce(host,''), coalesce(pid,0), ''";

std::string run_columns(int schema_version) {
  return fmt::format("{}{}{}", kRunColumns, schema_version >= 3 ? kRunColumnsV3 : kRunColumnsV2,
                     schema_version >= 4 ? kRunColumnsV4 : kRunColumnsV1);
}

std::string this_host() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string();
}

// A run still marked `running` whose process is gone (same host, pid no longer exists) was
// killed before it could mark itself: SIGKILL, OOM killer, power loss.
void infer_interrupted(RunRow& r) {
  if (r.status != "running" || r.pid <= 0 || r.host.empty() || r.host != this_host()) return;
  if (::kill(static_cast<pid_t>(r.pid), 0) == 0 || errno != ESRCH) return;
  r.status = "interrupted";
  r.status_inferred = true;
}

RunRow run_from(const Statement& st) {
  RunRow r;
  r.id = st.int64(0);
  r.started_at = st.text(1);
  r.finished_at = st.text(2);
  r.command = st.text(3);
  r.model_path = st.text(4);
  r.model_sha256 = st.text(5);
  r.stance = st.text(6);
  r.config_json = st.text(7);
  r.libtorch_version = st.text(8);
  r.device = st.text(9);
  r.status = st.text(10);
  r.dropped_events = st.int64(11);
  r.source = st.text(12);
  r.rank = static_cast<int>(st.int64(13));
  r.world_size = static_cast<int>(st.int64(14));
  r.host = st.text(15);
  r.pid = st.int64(16);
  r.last_event_at = st.text(17);
  infer_interrupted(r);
  return r;
}
}  // namespace

std::vector<RunRow> RunReader::runs() const {
  auto st = db_->prepare(fmt::format("SELECT {} FROM runs ORDER BY id", run_columns(schema_version_)));
  std::vector<RunRow> out;
  while (st.step()) out.push_back(run_from(st));
  return out;
}

std::optional<RunRow> RunReader::run(Id run_id) const {
  auto st = db_->prepare(fmt::format("SELECT {} FROM runs WHERE id=?", run_columns(schema_version_)));
  st.bind(1, run_id);
  if (!st.step()) return std::nullopt;
  return run_from(st);
}

RunCounts RunReader::counts(Id run_id) const {
  Database& db = *db_;
  RunCounts s;
  s.frames = count_of(db, "SELECT count(*) FROM frames WHERE run_id=?", run_id);
  s.compiles = count_of(db, "SELECT count(*) FROM compiles WHERE run_id=?", run_id);
  // GraphRow::captured(): graphs compiled from a captured one (training's forward and backward)
  // do not count again.
  s.graphs = count_of(db, schema_version_ >= 3 ? "SELECT count(*) FROM graphs WHERE run_id=? AND kind IN ('captured','dynamo')"
                                                : "SELECT count(*) FROM graphs WHERE run_id=?",
                      run_id);
  s.graph_breaks = count_of(db, "SELECT count(*) FROM graph_breaks WHERE run_id=?", run_id);
  s.guards = count_of(db, "SELECT count(*) FROM guards WHERE run_id=?", run_id);
  s.guard_failures = count_of(db, "SELECT count(*) FROM guard_failures WHERE run_id=?", run_id);
  s.recompiles = count_of(db, "SELECT count(*) FROM recompiles WHERE run_id=?", run_id);
  s.recompile_limit_hits = count_of(
      db, "SELECT count(*) FROM perf_hints WHERE run_id=? AND kind='recompile_limit'", run_id);
  s.calls = count_of(db, "SELECT count(*) FROM calls WHERE run_id=?", run_id);
  s.eager_calls =
      count_of(db, "SELECT count(*) FROM calls WHERE run_id=? AND path<>'compiled'", run_id);
  s.kernel_rows = count_of(db, "SELECT count(*) FROM kernels WHERE run_id=?", run_id);
  s.kernels = s.kernel_rows;
  if (schema_version_ >= 2) {
    s.kernels += count_of(db, "SELECT coalesce(sum(count),0) FROM kernel_summaries WHERE run_id=?", run_id);
  }
  s.steps = count_of(db, "SELECT count(*) FROM steps WHERE run_id=?", run_id);
  s.perf_hints = count_of(db, "SELECT count(*) FROM perf_hints WHERE run_id=?", run_id);
  s.compile_time_ns =
      count_of(db, "SELECT coalesce(sum(duration_ns),0) FROM compiles WHERE run_id=?", run_id);
  return s;
}

std::vector<FrameRow> RunReader::frames(Id run_id) const {
  auto st = db_->prepare(
      "SELECT id, coalesce(name,''), coalesce(module_path,''), coalesce(file,''), "
      "coalesce(line,0) FROM frames WHERE run_id=? ORDER BY id");
  st.bind(1, run_id);
  std::vector<FrameRow> out;
  while (st.step()) {
    out.push_back({st.int64(0), st.text(1), st.text(2), st.text(3), static_cast<int>(st.int64(4))});
  }
  return out;
}

std::vector<CompileRow> RunReader::compiles(Id run_id) const {
  auto st = db_->prepare(fmt::format(
      "SELECT id, coalesce(frame_id,0), coalesce(compile_id,''), coalesce(reason,''), "
      "coalesce(status,''), coalesce(start_ns,0), coalesce(duration_ns,0), coalesce(cache_hit,0), "
      "{} FROM compiles WHERE run_id=? ORDER BY start_ns, id",
      schema_version_ >= 3 ? "attempt" : "0"));
  st.bind(1, run_id);
  std::vector<CompileRow> out;
  while (st.step()) {
    out.push_back({st.int64(0), st.int64(1), st.text(2), st.text(3), st.text(4), st.int64(5),
                   st.int64(6), st.int64(7) != 0, static_cast<int>(st.int64(8))});
  }
  return out;
}

std::vector<CompilePhaseRow> RunReader::compile_phases(Id run_id) const {
  auto st = db_->prepare(
      "SELECT coalesce(compile_id,0), coalesce(phase,''), coalesce(start_ns,0), "
      "coalesce(duration_ns,0) FROM compile_phases WHERE run_id=? ORDER BY start_ns, id");
  st.bind(1, run_id);
  std::vector<CompilePhaseRow> out;
  while (st.step()) out.push_back({st.int64(0), st.text(1), st.int64(2), st.int64(3)});
  return out;
}

std::vector<GraphRow> RunReader::graphs(Id run_id) const {
  auto st = db_->prepare(fmt::format(
      "SELECT g.id, coalesce(g.compile_id,0), coalesce(c.compile_id,''), coalesce(g.op_count,0), "
      "coalesce(g.ir,''), coalesce(g.code,''), {} FROM graphs g LEFT JOIN compiles c "
      "ON c.id=g.compile_id WHERE g.run_id=? ORDER BY g.id",
      schema_version_ >= 3 ? "g.kind, coalesce(g.fx_key,'')" : "'captured', ''"));
  st.bind(1, run_id);
  std::vector<GraphRow> out;
  while (st.step()) {
    out.push_back({st.int64(0), st.int64(1), st.text(2), static_cast<int>(st.int64(3)),
                   st.text(4), st.text(5), st.text(6), st.text(7)});
  }
  return out;
}

std::vector<GuardRow> RunReader::guards(Id run_id) const {
  auto st = db_->prepare(
      "SELECT id, coalesce(compile_id,0), coalesce(kind,''), coalesce(expr,''), "
      "coalesce(file,''), coalesce(line,0) FROM guards WHERE run_id=? ORDER BY id");
  st.bind(1, run_id);
  std::vector<GuardRow> out;
  while (st.step()) {
    out.push_back({st.int64(0), st.int64(1), st.text(2), st.text(3), st.text(4),
                   static_cast<int>(st.int64(5))});
  }
  return out;
}

std::vector<GuardFailureRow> RunReader::guard_failures(Id run_id) const {
  auto st = db_->prepare(
      "SELECT f.call_id, f.compile_id, f.guard_id, coalesce(c.compile_id,''), "
      "coalesce(g.kind,''), coalesce(g.expr,''), coalesce(g.file,''), coalesce(g.line,0), "
      "coalesce(f.expected,''), coalesce(f.actual,''), coalesce(f.message,'') "
      "FROM guard_failures f LEFT JOIN compiles c ON c.id=f.compile_id "
      "LEFT JOIN guards g ON g.id=f.guard_id WHERE f.run_id=? ORDER BY f.id");
  st.bind(1, run_id);
  std::vector<GuardFailureRow> out;
  while (st.step()) {
    GuardFailureRow r;
    r.call_id = st.int64(0);
    r.compile_id = st.int64(1);
    r.guard_id = st.int64(2);
    r.compile_label = st.text(3);
    r.guard_kind = st.text(4);
    r.guard_expr = st.text(5);
    r.guard_file = st.text(6);
    r.guard_line = static_cast<int>(st.int64(7));
    r.expected = st.text(8);
    r.actual = st.text(9);
    r.message = st.text(10);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RecompileRow> RunReader::recompiles(Id run_id) const {
  auto st = db_->prepare(
      "SELECT r.id, coalesce(r.frame_id,0), coalesce(r.compile_id,0), coalesce(r.call_id,0), "
      "coalesce(fr.name,''), coalesce(c.compile_id,''), coalesce(r.reason,''), "
      "coalesce(r.cache_size,0) FROM recompiles r LEFT JOIN compiles c ON c.id=r.compile_id "
      "LEFT JOIN frames fr ON fr.id=r.frame_id WHERE r.run_id=? ORDER BY r.id");
  st.bind(1, run_id);
  std::vector<RecompileRow> out;
  while (st.step()) {
    RecompileRow r;
    r.id = st.int64(0);
    r.frame_id = st.int64(1);
    r.compile_id = st.int64(2);
    r.call_id = st.int64(3);
    r.frame_name = st.text(4);
    r.compile_label = st.text(5);
    r.reason = st.text(6);
    r.cache_size = static_cast<int>(st.int64(7));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<CallRow> RunReader::calls(Id run_id) const {
  auto st = db_->prepare(fmt::format(
      "SELECT id, coalesce(frame_id,0), coalesce(compile_id,0), coalesce(start_ns,0), "
      "coalesce(duration_ns,0), coalesce(path,''), coalesce(input_shapes,''), {} FROM calls "
      "WHERE run_id=? ORDER BY start_ns, id",
      schema_version_ >= 5 ? "coalesce(peak_gpu_bytes,0)" : "0"));
  st.bind(1, run_id);
  std::vector<CallRow> out;
  while (st.step()) {
    out.push_back({st.int64(0), st.int64(1), st.int64(2), st.int64(3), st.int64(4), st.text(5),
                   st.text(6), st.int64(7)});
  }
  return out;
}

std::vector<StepRow> RunReader::steps(Id run_id) const {
  auto st = db_->prepare(fmt::format(
      "SELECT step, coalesce(start_ns,0), coalesce(duration_ns,0), loss, {} FROM steps "
      "WHERE run_id=? ORDER BY step",
      schema_version_ >= 5 ? "coalesce(forward_ns,0), coalesce(backward_ns,0), coalesce(optimizer_ns,0)"
                           : "0, 0, 0"));
  st.bind(1, run_id);
  std::vector<StepRow> out;
  while (st.step()) {
    StepRow r{st.int64(0), st.int64(1), st.int64(2), std::nullopt, st.int64(4), st.int64(5), st.int64(6)};
    if (!st.is_null(3)) r.loss = st.real(3);
    out.push_back(r);
  }
  return out;
}

std::vector<PerfHintRow> RunReader::perf_hints(Id run_id) const {
  auto st = db_->prepare(
      "SELECT coalesce(compile_id,0), coalesce(kind,''), coalesce(op,''), coalesce(message,''), "
      "coalesce(file,''), coalesce(line,0) FROM perf_hints WHERE run_id=? ORDER BY id");
  st.bind(1, run_id);
  std::vector<PerfHintRow> out;
  while (st.step()) {
    out.push_back({st.int64(0), st.text(1), st.text(2), st.text(3), st.text(4),
                   static_cast<int>(st.int64(5))});
  }
  return out;
}

void RunReader::for_each_kernel(Id run_id, const std::function<void(const KernelRow&)>& visit,
                                std::optional<TimeRange> range) const {
  std::string sql =
      "SELECT coalesce(call_id,0), coalesce(graph_id,0), coalesce(name,''), coalesce(kind,''), "
      "coalesce(device,''), coalesce(stream,0), start_ns, duration_ns, coalesce(correlation_id,0), ";
  sql += schema_version_ >= 5 ? "coalesce(bytes,0)" : "0";
  sql += schema_version_ >= 6 ? ", coalesce(mangled_name,'')" : ", ''";
  sql += " FROM kernels WHERE run_id=?";
  if (range) sql += " AND start_ns >= ? AND start_ns < ?";
  sql += " ORDER BY start_ns";
  auto st = db_->prepare(sql);
  st.bind(1, run_id);
  if (range) st.bind(2, range->start_ns).bind(3, range->end_ns);
  KernelRow row;
  KernelNameReader names;
  while (st.step()) {
    row.call_id = st.int64(0);
    row.graph_id = st.int64(1);
    row.mangled_name.assign(st.text_view(10));
    names.read(st.text_view(2), row.name, row.mangled_name);
    row.kind.assign(st.text_view(3));
    row.device.assign(st.text_view(4));
    row.stream = static_cast<int>(st.int64(5));
    row.start_ns = st.int64(6);
    row.duration_ns = st.int64(7);
    row.correlation_id = st.int64(8);
    row.bytes = st.int64(9);
    visit(row);
  }
}

std::vector<KernelSummaryRow> RunReader::kernel_summaries(Id run_id) const {
  std::vector<KernelSummaryRow> out;
  if (schema_version_ < 2) return out;
  auto st = db_->prepare(fmt::format(
      "SELECT coalesce(call_id,0), coalesce(graph_id,0), coalesce(name,''), coalesce(kind,''), "
      "coalesce(device,''), coalesce(stream,0), start_ns, end_ns, count, total_ns, min_ns, max_ns, "
      "sum_sq_ns2, {}, {} FROM kernel_summaries WHERE run_id=? ORDER BY start_ns, id",
      schema_version_ >= 5 ? "coalesce(bytes,0)" : "0",
      schema_version_ >= 6 ? "coalesce(mangled_name,'')" : "''"));
  st.bind(1, run_id);
  KernelNameReader names;
  while (st.step()) {
    KernelSummaryRow r;
    r.call_id = st.int64(0);
    r.graph_id = st.int64(1);
    r.mangled_name = st.text(14);
    names.read(st.text_view(2), r.name, r.mangled_name);
    r.kind = st.text(3);
    r.device = st.text(4);
    r.stream = static_cast<int>(st.int64(5));
    r.start_ns = st.int64(6);
    r.end_ns = st.int64(7);
    r.count = st.int64(8);
    r.total_ns = st.int64(9);
    r.min_ns = st.int64(10);
    r.max_ns = st.int64(11);
    r.sum_sq_ns2 = st.real(12);
    r.bytes = st.int64(13);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<GraphKernelTime> RunReader::graph_kernel_times(Id run_id) const {
  std::string rows =
      "SELECT graph_id, kind, 1 AS n, duration_ns AS t FROM kernels WHERE run_id=?1";
  if (schema_version_ >= 2) {
    rows += " UNION ALL SELECT graph_id, kind, count, total_ns FROM kernel_summaries WHERE run_id=?1";
  }
  auto st = db_->prepare(
      "SELECT coalesce(k.graph_id,0), coalesce(k.kind,''), coalesce(c.compile_id,''), sum(k.n), "
      "sum(k.t), " + std::string(schema_version_ >= 3 ? "coalesce(max(g.kind),'captured')" : "'captured'") +
      " FROM (" + rows + ") k LEFT JOIN graphs g ON g.id=k.graph_id "
      "LEFT JOIN compiles c ON c.id=g.compile_id GROUP BY 1, 2 ORDER BY 1, 5 DESC, 2");
  st.bind(1, run_id);
  std::vector<GraphKernelTime> out;
  while (st.step()) {
    out.push_back({st.int64(0), st.text(2), st.text(1), st.int64(3), st.int64(4), st.text(5)});
  }
  return out;
}

std::vector<CallKindTime> RunReader::call_kind_times(Id run_id) const {
  std::string rows =
      "SELECT call_id, kind, 1 AS n, duration_ns AS t FROM kernels WHERE run_id=?1 AND call_id>0";
  if (schema_version_ >= 2) {
    rows += " UNION ALL SELECT call_id, kind, count, total_ns FROM kernel_summaries "
            "WHERE run_id=?1 AND call_id>0";
  }
  auto st = db_->prepare("SELECT call_id, coalesce(kind,''), sum(n), sum(t) FROM (" + rows +
                         ") GROUP BY 1, 2 ORDER BY 1, 2");
  st.bind(1, run_id);
  std::vector<CallKindTime> out;
  while (st.step()) out.push_back({st.int64(0), st.text(1), st.int64(2), st.int64(3)});
  return out;
}

std::vector<std::pair<std::string, int64_t>> RunReader::counters(Id run_id) const {
  std::vector<std::pair<std::string, int64_t>> out;
  if (schema_version_ < 2) return out;
  auto st = db_->prepare(
      "SELECT name, sum(value) FROM run_counters WHERE run_id=? GROUP BY name ORDER BY name");
  st.bind(1, run_id);
  while (st.step()) out.emplace_back(st.text(0), st.int64(1));
  return out;
}

TimeRange RunReader::time_range(Id run_id) const {
  auto st = db_->prepare(
      "SELECT min(s), max(e) FROM ("
      "SELECT min(start_ns) s, max(start_ns+duration_ns) e FROM calls WHERE run_id=?1 UNION ALL "
      "SELECT min(start_ns), max(start_ns+duration_ns) FROM kernels WHERE run_id=?1 UNION ALL "
      "SELECT min(start_ns), max(start_ns+duration_ns) FROM compiles WHERE run_id=?1 UNION ALL "
      "SELECT min(start_ns), max(start_ns+duration_ns) FROM steps WHERE run_id=?1)");
  st.bind(1, run_id);
  TimeRange r;
  if (st.step() && !st.is_null(0)) {
    r.start_ns = st.int64(0);
    r.end_ns = st.int64(1);
  }
  return r;
}

std::vector<GraphBreakRow> RunReader::graph_breaks(Id run_id) const {
  auto st = db_->prepare(
      "SELECT coalesce(b.compile_id,0), coalesce(c.frame_id,0), coalesce(b.type,''), "
      "coalesce(b.break_id,''), coalesce(b.op,''), coalesce(b.reason,''), coalesce(b.hint,''), "
      "coalesce(b.file,''), coalesce(b.line,0), coalesce(b.col,0), coalesce(b.source,''), "
      "coalesce(b.module_path,''), coalesce(b.stack_json,'[]') FROM graph_breaks b "
      "LEFT JOIN compiles c ON c.id=b.compile_id WHERE b.run_id=? ORDER BY b.id");
  st.bind(1, run_id);
  std::vector<GraphBreakRow> out;
  while (st.step()) {
    GraphBreakRow r;
    r.compile_id = st.int64(0);
    r.frame_id = st.int64(1);
    r.type = st.text(2);
    r.break_id = st.text(3);
    r.op = st.text(4);
    r.reason = st.text(5);
    r.hint = st.text(6);
    r.file = st.text(7);
    r.line = static_cast<int>(st.int64(8));
    r.col = static_cast<int>(st.int64(9));
    r.source = st.text(10);
    r.module_path = st.text(11);
    r.stack_json = st.text(12);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<SourceRow> RunReader::sources(Id run_id) const {
  std::vector<SourceRow> out;
  if (schema_version_ < 3) return out;
  auto st = db_->prepare("SELECT file, sha256, text FROM sources WHERE run_id=? ORDER BY file");
  st.bind(1, run_id);
  while (st.step()) out.push_back({st.text(0), st.text(1), st.text(2)});
  return out;
}

}  // namespace tcprof
