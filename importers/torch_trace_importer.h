// TORCH_TRACE records mapped to tcprof's event model, through the same RunWriter as tcprof's own
// runs, so every reader (report, check, diff, export, the GUI) works on imported runs unchanged.
//
// One run per session: a compile id that starts again in the same file (after
// torch._dynamo.reset()) begins a new run, never merged with the one before. Memory: per compile a
// few small fields and at most one graph waiting for its code and cache key; payloads are written
// as they come.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "importers/guard_text.h"
#include "importers/trace_lines.h"
#include "core/events.h"
#include "core/run_writer.h"

namespace tcprof::import {

// What one imported run holds (the `import --json` figures that do not need analysis/).
struct ImportedRun {
  std::string db;
  Id run_id = 0;
  std::string trace;  // the file it came from
  int rank = 0, world_size = 1;
  std::string pytorch_version;
  int64_t frames = 0, compiles = 0, compiles_incomplete = 0, graph_breaks = 0, recompiles = 0,
          guard_failures = 0, graphs = 0, guards = 0, kernels = 0, damaged_records = 0,
          unknown_records = 0;
};

// Where a Kineto trace's kernels go: the run of the matching TORCH_TRACE session, with the ids that
// its Dynamo compile ids, FX graph cache keys and Triton kernel names were given.
struct KinetoTarget {
  RunWriter* writer = nullptr;
  std::unordered_map<std::string, Id> compile_by_label;  // "0/1" -> compiles.id
  std::unordered_map<Id, Id> frame_by_compile;
  std::unordered_map<std::string, Id> graph_by_fx_key;
  std::unordered_map<std::string, Id> graph_by_kernel;  // triton kernel name -> graphs.id
  int64_t* kernels = nullptr;                            // the run's kernel count, to add to
};

class TorchTraceImporter {
 public:
  // `rank` < 0: take it from the records (`rank` appears under torch.distributed), else 0.
  TorchTraceImporter(std::string db_path, std::string trace_path, int rank, int world_size);
  ~TorchTraceImporter();

  void add(const TraceRecord& record);
  // `import --follow` learns the job's ranks as their logs appear: the runs get the final count.
  void set_world_size(int world_size) { world_size_ = world_size; }
  // The job was still writing when the import stopped (Ctrl-C on `--follow`): the open session's
  // run ends `interrupted`, as a native run stopped the same way does.
  void stop_early() { stopped_early_ = true; }
  // Blocks until everything added so far is committed (readers see it).
  void flush();
  // Writes what the records said so far about the run (version, config, device, start) into the
  // open session's run row, for readers of a run still being imported (`--follow`).
  void update_run_row(bool closing = false);
  // The last session's target for a Kineto trace; opens an empty run when the log had none.
  KinetoTarget kineto_target();
  // Closes every run (damage counts go to the last one: the reader counts per file).
  std::vector<ImportedRun> finish(const TraceDamage& damage, int64_t unknown_records);

  // Top-level record kinds seen that tcprof does not know (a newer PyTorch), with counts.
  const std::map<std::string, int64_t>& unknown_kinds() const { return unknown_; }

 private:
  struct Compile;
  struct Session;
  Session& session();
  void start_session();
  void close_session();
  Compile& compile_for(int frame, int frame_compile);
  Id frame_for(int frame, const std::string& name, const std::string& file, int line);
  void write_compile(Compile& c);
  void flush_graph(Compile& c);
  std::string resolve(const nlohmann::json& filename) const;
  std::string resolve_suffix(const std::string& cut) const;
  // The innermost frame of the user's code in a `stack` / `user_stack` list.
  bool user_frame(const nlohmann::json& stack, std::string& file, int& line) const;

  void on_chromium(Compile* c, const nlohmann::json& event);
  void on_metrics(Compile& c, const nlohmann::json& m);
  void on_graph(Compile& c, const std::string& kind, const std::string& payload);
  void on_artifact(Compile* c, const std::string& name, const TraceRecord& r);

  std::string db_path_, trace_path_;
  int rank_, world_size_;
  bool stopped_early_ = false;
  std::unordered_map<int64_t, std::string> strings_;  // string table: filename id -> path
  std::unique_ptr<Session> session_;
  std::vector<ImportedRun> done_;
  std::map<std::string, int64_t> unknown_;
};

// True when `kind` is a TORCH_TRACE record kind tcprof knows (imported or deliberately skipped).
bool known_record_kind(const std::string& kind);
// True for an `artifact` record's name tcprof knows; others count as unknown ("artifact NAME").
bool known_artifact_name(const std::string& name);

}  // namespace tcprof::import
