// What the one-shot import and `import --follow` share: which files of a folder are logs and of
// which rank, and the one-line descriptions of damage and of an imported Kineto trace.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "importers/kineto_importer.h"
#include "importers/torch_trace_importer.h"
#include "importers/trace_lines.h"

namespace tcprof::import {

struct TraceFile {
  std::string path;
  int rank = -1;  // from the file name; -1: from the records
};

// torch.distributed writes one log per rank: dedicated_log_torch_trace_rank_N_<random>.log
int rank_from_name(const std::string& name);
bool is_log_name(const std::string& name);

// A folder's logs (by rank, then name; an error when it holds none), or the file itself.
std::vector<TraceFile> expand(const std::string& path, std::vector<std::string>& errors);

// Records whose JSON is intact but whose fields have the wrong types (libFuzzer found these).
struct FieldErrors {
  int64_t count = 0;
  std::string first;
};

// Hands the importer every record the reader has now, calling `each` after each one; returns
// how many were read.
int64_t feed_records(TraceLineReader& reader, TorchTraceImporter& importer, FieldErrors& bad,
                     const std::function<void()>& each = {});
TraceDamage with_field_errors(TraceDamage damage, const FieldErrors& bad);
int64_t unknown_records(const TorchTraceImporter& importer);
// The warnings of one log: its damage and the record kinds this tcprof does not know.
std::vector<std::string> log_warnings(const std::string& path, const TraceDamage& damage,
                                      const TorchTraceImporter& importer);

std::string describe_damage(const std::string& path, const TraceDamage& d);
std::string kineto_note(const std::string& path, const KinetoCounts& c);

}  // namespace tcprof::import
