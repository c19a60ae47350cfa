// RunReader: the query API over a tcprof database that the CLI and the GUI share. It opens files
// read-only, so it can read a database that a live job is still writing (WAL readers see every
// committed batch), and files copied from another machine.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/events.h"

namespace tcprof {

class Database;

struct RunRow {
  Id id = 0;
  std::string started_at, finished_at, command, model_path, model_sha256, stance, config_json,
      libtorch_version, device, status;
  int64_t dropped_events = 0;
  std::string source = "tcprof";  // tcprof | torch_trace (imported)
  int rank = 0, world_size = 1;
  std::string host;
  int64_t pid = 0;
  std::string last_event_at;  // when the writer last committed events (schema 4); may be empty
  // True when `status` says `interrupted` because the file said `running` but the recording
  // process (same host, recorded pid) is gone: killed before it could mark the run.
  bool status_inferred = false;
};

// Counts of a run's rows. Figures that need a definition (break sites, medians) are analysis/'s.
struct RunCounts {
  int64_t frames = 0, compiles = 0, graphs = 0, graph_breaks = 0, guards = 0, guard_failures = 0,
          recompiles = 0, recompile_limit_hits = 0, calls = 0, eager_calls = 0, kernels = 0,
          steps = 0, perf_hints = 0;
  // `kernels` counts launches (and API records) recorded one row each plus those folded into
  // --profile summary rows; `kernel_rows` only the former, the rows a kernel reader streams.
  int64_t kernel_rows = 0;
  int64_t compile_time_ns = 0;  // compiles' durations added up; analysis::summarize_run replaces it with compile_time.h's total
};

struct GuardFailureRow {
  Id call_id = 0, compile_id = 0, guard_id = 0;
  std::string compile_label;  // "0/1"
  std::string guard_kind, guard_expr, guard_file;
  int guard_line = 0;
  std::string expected, actual, message;
};

struct RecompileRow {
  Id id = 0, frame_id = 0, compile_id = 0, call_id = 0;
  std::string frame_name, compile_label, reason;
  int cache_size = 0;
  std::vector<GuardFailureRow> failures;  // filled by analysis/recompiles.h, empty from the reader
};

struct CompileRow {
  Id id = 0, frame_id = 0;
  std::string compile_label, reason, status;
  int64_t start_ns = 0, duration_ns = 0;
  bool cache_hit = false;
  int attempt = 0;  // restarts after a graph break (imported runs)
};

struct CompilePhaseRow {
  Id compile_id = 0;
  std::string phase;
  int64_t start_ns = 0, duration_ns = 0;
};

struct GraphRow {
  Id id = 0, compile_id = 0;
  std::string compile_label;
  int op_count = 0;
  std::string ir, code;
  std::string kind = "captured", fx_key;
  // A graph as Dynamo captures it (tcprof's own, or an imported Dynamo graph), as opposed to the
  // graphs compiled from it (aot_forward, aot_backward, inductor_post_grad, ...). Graph counts in
  // reports and gates count these: one per compile, however it was lowered.
  bool captured() const { return kind == "captured" || kind == "dynamo"; }
};

// A user source file recorded with the run (schema 3; none in older files).
struct SourceRow {
  std::string file, sha256, text;
};

struct GuardRow {
  Id id = 0, compile_id = 0;
  std::string kind, expr, file;
  int line = 0;
};

struct FrameRow {
  Id id = 0;
  std::string name, module_path, file;
  int line = 0;
};

struct CallRow {
  Id id = 0, frame_id = 0, compile_id = 0;
  int64_t start_ns = 0, duration_ns = 0;
  std::string path, input_shapes;
  int64_t peak_gpu_bytes = 0;  // 0: not measured (a CPU run, or a file older than schema 5)
};

struct StepRow {
  int64_t step = 0, start_ns = 0, duration_ns = 0;
  std::optional<double> loss;
  int64_t forward_ns = 0, backward_ns = 0, optimizer_ns = 0;  // 0: not recorded (before schema 5)
};

struct PerfHintRow {
  Id compile_id = 0;
  std::string kind, op, message, file;
  int line = 0;
};

// `name` is demangled (core/kernel_name.h); `mangled_name` is what CUPTI reported for a C++
// kernel, empty when the name was never mangled.
struct KernelRow {
  Id call_id = 0, graph_id = 0;
  std::string name, kind, device, mangled_name;
  int stream = 0;
  int64_t start_ns = 0, duration_ns = 0;
  int64_t correlation_id = 0;
  int64_t bytes = 0;  // copies and fills
};

// One --profile summary row: a kernel name's launches in one call window.
struct KernelSummaryRow {
  Id call_id = 0, graph_id = 0;
  std::string name, kind, device, mangled_name;
  int stream = 0;
  int64_t start_ns = 0, end_ns = 0, count = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  double sum_sq_ns2 = 0;
  int64_t bytes = 0;  // copies and fills, all `count` launches
};

// Kernel time of one graph split by kind (generated, extern, fallback, eager, guard, gpu, ...).
struct GraphKernelTime {
  Id graph_id = 0;
  std::string compile_label;  // of the graph's compile; empty for kernels outside any graph
  std::string kind;           // of the kernels
  int64_t instances = 0, total_ns = 0;
  std::string graph_kind = "captured";  // of the graph (GraphRow::kind)
};

// One graph_breaks row with the frame whose graph it ended (through its compile).
struct GraphBreakRow {
  Id compile_id = 0, frame_id = 0;
  std::string type, break_id, op, reason, hint, file;
  int line = 0, col = 0;
  std::string source, module_path, stack_json;
};

struct TimeRange {
  int64_t start_ns = 0, end_ns = 0;
  bool empty() const { return end_ns <= start_ns; }
};

// Time of one kind of kernel row (gpu, memcpy, cuda_runtime, eager, ...) inside one call, full and
// summary rows together.
struct CallKindTime {
  Id call_id = 0;
  std::string kind;
  int64_t count = 0, total_ns = 0;
};

class RunReader {
 public:
  // Throws Error(Input) naming the file when it is missing, not SQLite, not a tcprof database,
  // or of a newer schema version.
  explicit RunReader(const std::string& path);
  ~RunReader();
  RunReader(const RunReader&) = delete;
  RunReader& operator=(const RunReader&) = delete;

  const std::string& path() const { return path_; }
  int schema_version() const { return schema_version_; }

  std::vector<RunRow> runs() const;
  std::optional<RunRow> run(Id run_id) const;
  RunCounts counts(Id run_id) const;

  std::vector<FrameRow> frames(Id run_id) const;
  std::vector<CompileRow> compiles(Id run_id) const;
  std::vector<CompilePhaseRow> compile_phases(Id run_id) const;
  std::vector<GraphRow> graphs(Id run_id) const;
  std::vector<GuardRow> guards(Id run_id) const;
  std::vector<RecompileRow> recompiles(Id run_id) const;
  std::vector<GuardFailureRow> guard_failures(Id run_id) const;
  std::vector<CallRow> calls(Id run_id) const;
  std::vector<StepRow> steps(Id run_id) const;
  std::vector<PerfHintRow> perf_hints(Id run_id) const;
  std::vector<SourceRow> sources(Id run_id) const;  // by file name; empty before schema 3

  // Streams kernels ordered by start time (optionally within a range) without materialising them.
  void for_each_kernel(Id run_id, const std::function<void(const KernelRow&)>& visit,
                       std::optional<TimeRange> range = {}) const;
  // --profile summary rows, by start time (none in files older than schema 2).
  std::vector<KernelSummaryRow> kernel_summaries(Id run_id) const;
  // Per graph and kind, full and summary kernels together; graphs in id order, kinds by time.
  std::vector<GraphKernelTime> graph_kernel_times(Id run_id) const;
  // Per call and kind, for rows recorded inside a call (call_id set); by call, then kind.
  std::vector<CallKindTime> call_kind_times(Id run_id) const;
  // run_counters summed per name, by name.
  std::vector<std::pair<std::string, int64_t>> counters(Id run_id) const;
  // Earliest start and latest end over calls, kernels, compiles and steps of the run.
  TimeRange time_range(Id run_id) const;
  // Every break, not de-duplicated, in recording order, each with its frame (CI gates compare
  // breaks per frame).
  std::vector<GraphBreakRow> graph_breaks(Id run_id) const;

 private:
  std::string path_;
  std::unique_ptr<Database> db_;
  int schema_version_ = 0;
};


}  // namespace tcprof
