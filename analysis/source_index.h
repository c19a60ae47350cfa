// The user's source text a run recorded (the `sources` table), looked up by file and line. Paths
// are matched exactly, else by file name (a run recorded on another machine, or a guard that
// names the file the way the model archive spelled it).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/run_reader.h"

namespace tcprof::analysis {

class SourceIndex {
 public:
  SourceIndex() = default;
  explicit SourceIndex(std::vector<SourceRow> sources);
  static SourceIndex of_run(const RunReader& reader, Id run_id);

  bool empty() const { return files_.empty(); }
  // The recorded file, or null when the run holds no text for it.
  const SourceRow* file(std::string_view path) const;
  // Line `line` (1-based) without its newline; empty when unknown.
  std::string line(std::string_view path, int line) const;
  // Every line of the file; empty when unknown.
  std::vector<std::string> lines(std::string_view path) const;

 private:
  std::vector<SourceRow> files_;
};

}  // namespace tcprof::analysis
