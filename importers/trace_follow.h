// `tcprof import --follow`: a running job's TORCH_TRACE folder (and torch.profiler's output
// folder) imported as it is written, so `tcprof-gui` shows the job live.
//
// Each poll reads what was appended since the last one: new logs (a rank that starts later), new
// lines, a last line still being written (left for the next poll), and profiler traces that
// tensorboard_trace_handler finished writing (one per profiled step). Records go through the
// same importer as a one-shot import, whose RunWriter commits in batches every 100 ms, so a
// reader sees a record within one poll interval plus one commit. Runs are `running` meanwhile.
//
// Restarting is safe: a log already imported into the database (a run of the same file) is
// removed and read again from its first line, so a restarted follow ends with exactly what a
// one-shot import of the same lines gives; nothing is lost or doubled.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "importers/trace_import.h"

namespace tcprof::import {

struct FollowRequest {
  std::string dir;         // the job's TORCH_TRACE folder; may not exist yet
  std::string kineto_dir;  // torch.profiler traces (tensorboard_trace_handler); empty: none
  std::string db;
};

class TraceFollower {
 public:
  explicit TraceFollower(FollowRequest request);
  ~TraceFollower();
  TraceFollower(const TraceFollower&) = delete;
  TraceFollower& operator=(const TraceFollower&) = delete;

  // Reads everything written since the last call. Returns how many records it imported (Kineto
  // traces count one each).
  int64_t poll();
  // Blocks until everything read so far is committed (the writers commit every 100 ms anyway).
  void flush();

  // True once records were read and every process that wrote them (the glog prefix's pid) has
  // exited. Only meaningful when the job runs on this machine.
  bool job_ended() const;

  // Reads to the end and closes every run: `finished`, or `interrupted` when the log stops
  // inside a compile or `job_still_running` (the user stopped following a live job).
  ImportResult finish(bool job_still_running);

  int64_t records() const { return records_; }
  size_t logs() const { return logs_.size(); }

 private:
  struct Log;
  void discover_logs();
  void discover_kineto();
  Log* log_for_kineto(const std::string& path);
  void import_kineto_trace(Log& log, const std::string& path);

  FollowRequest request_;
  std::vector<std::unique_ptr<Log>> logs_;
  std::set<std::string> known_logs_;
  // Profiler traces: size at the last poll and, once it held still, whether it is whole (then
  // imported) or cut (looked at again only when it grows).
  struct KinetoFile {
    int64_t size = -1;
    enum { Growing, Whole, Cut } state = Growing;
  };
  std::map<std::string, KinetoFile> kineto_files_;
  std::set<std::string> kineto_done_;
  std::vector<std::string> notes_, errors_;
  int64_t records_ = 0;
};

}  // namespace tcprof::import
