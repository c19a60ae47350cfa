// `tcprof import` without the command line: TORCH_TRACE files, folders of per-rank files and
// Kineto traces into one run database. `tcprof check LOG_OR_DIR` uses it to import on the fly.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "importers/torch_trace_importer.h"

namespace tcprof::import {

struct ImportRequest {
  std::vector<std::string> paths;   // TORCH_TRACE files (.gz or not) or folders of them
  std::vector<std::string> kineto;  // torch.profiler Chrome traces (.json or .json.gz)
  std::string db;                   // the database to write (created when missing)
};

struct ImportResult {
  std::string db;
  std::vector<ImportedRun> runs;
  std::vector<std::string> warnings;  // damage and unknown records, one line each
  std::vector<std::string> errors;    // inputs that could not be used at all
  std::vector<std::string> notes;     // what each Kineto trace held, one line each
};

// Imports what can be read. Files that are not logs at all land in `errors` (the caller exits 2);
// damage inside a log lands in `warnings` and the rest of the log is imported.
// `progress`, when given, is called now and then with the share of the logs' bytes (as stored)
// read so far, 0..1, on the importing thread.
ImportResult import_traces(const ImportRequest& request, const std::function<void(double fraction)>& progress = {});

// True for a path `check` should import rather than open as a database or run as a model: a
// folder, or a file whose first line is a glog line with a JSON record (.gz or not).
bool looks_like_torch_trace(const std::string& path);

}  // namespace tcprof::import
