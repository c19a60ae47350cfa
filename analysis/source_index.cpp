#include "analysis/source_index.h"

#include "analysis/break_sites.h"

namespace tcprof::analysis {

SourceIndex::SourceIndex(std::vector<SourceRow> sources) : files_(std::move(sources)) {}

SourceIndex SourceIndex::of_run(const RunReader& reader, Id run_id) {
  return SourceIndex(reader.sources(run_id));
}

const SourceRow* SourceIndex::file(std::string_view path) const {
  if (path.empty()) return nullptr;
  for (const auto& f : files_) {
    if (f.file == path) return &f;
  }
  std::string name = file_basename(path);
  for (const auto& f : files_) {
    if (file_basename(f.file) == name) return &f;
  }
  return nullptr;
}

std::vector<std::string> SourceIndex::lines(std::string_view path) const {
  std::vector<std::string> out;
  const SourceRow* f = file(path);
  if (!f) return out;
  size_t start = 0;
  while (start < f->text.size()) {
    size_t end = f->text.find('\n', start);
    if (end == std::string::npos) end = f->text.size();
    out.push_back(f->text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string SourceIndex::line(std::string_view path, int line) const {
  const SourceRow* f = file(path);
  if (!f || line <= 0) return "";
  size_t start = 0;
  for (int n = 1; n < line; ++n) {
    start = f->text.find('\n', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  size_t end = f->text.find('\n', start);
  return f->text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace tcprof::analysis
