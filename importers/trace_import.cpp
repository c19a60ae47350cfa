#include "importers/trace_import.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "importers/kineto_importer.h"
#include "importers/trace_files.h"
#include "importers/trace_lines.h"
#include "core/error.h"

namespace tcprof::import {

namespace fs = std::filesystem;

bool looks_like_torch_trace(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return true;
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) return false;
  char buf[600] = {};
  int n = gzread(gz, buf, sizeof buf - 1);
  gzclose(gz);
  if (n <= 0) return false;
  std::string head(buf, static_cast<size_t>(n));
  size_t close = head.find("] {");
  return std::strchr("VIWEF", head[0]) != nullptr && head[0] != '\0' && close != std::string::npos &&
         head.find('\n') > close;
}

ImportResult import_traces(const ImportRequest& request, const std::function<void(double fraction)>& progress) {
  ImportResult result;
  result.db = request.db;
  std::vector<TraceFile> files;
  for (const auto& p : request.paths) {
    auto more = expand(p, result.errors);
    files.insert(files.end(), more.begin(), more.end());
  }
  int ranked = static_cast<int>(std::count_if(files.begin(), files.end(), [](const TraceFile& f) { return f.rank >= 0; }));
  int world_size = std::max(1, ranked);
  std::vector<bool> kineto_used(request.kineto.size(), false);
  std::vector<uint64_t> sizes;  // as stored: progress is the share of these bytes read
  uint64_t total_bytes = 0, done_bytes = 0;
  for (const auto& file : files) {
    std::error_code ec;
    const auto size = fs::file_size(file.path, ec);
    sizes.push_back(ec ? 0 : size);
    total_bytes += sizes.back();
  }
  auto report = [&](uint64_t at) {
    if (progress && total_bytes > 0) progress(std::min(1.0, static_cast<double>(at) / total_bytes));
  };

  for (size_t f = 0; f < files.size(); ++f) {
    const TraceFile& file = files[f];
    TraceLineReader reader(file.path);
    TorchTraceImporter importer(request.db, file.path, file.rank, world_size);
    FieldErrors bad_fields;
    feed_records(reader, importer, bad_fields, [&] {
      if (reader.records() % 256 == 0) report(done_bytes + reader.file_offset());
    });
    done_bytes += sizes[f];
    report(done_bytes);
    TraceDamage damage = with_field_errors(reader.damage(), bad_fields);
    if (reader.records() == 0) {
      result.errors.push_back(
          reader.bytes_read() == 0 && !damage.gzip_cut
              ? fmt::format("'{}' is empty: not a TORCH_TRACE log", file.path)
              : fmt::format("'{}' is not a TORCH_TRACE log (no glog line with a JSON record){}", file.path,
                            damage.first_problem.empty() ? "" : ": " + damage.first_problem));
      continue;
    }
    // Kineto traces go to the log of the same rank (the only log when there is one).
    for (size_t k = 0; k < request.kineto.size(); ++k) {
      if (kineto_used[k] || (files.size() > 1 && file.rank >= 0 && file.rank != static_cast<int>(k))) continue;
      KinetoTarget target = importer.kineto_target();
      try {
        result.notes.push_back(kineto_note(request.kineto[k], import_kineto(request.kineto[k], target)));
      } catch (const Error& e) {
        result.errors.push_back(e.what());
      }
      kineto_used[k] = true;
    }
    const int64_t unknown = unknown_records(importer);
    for (auto& w : log_warnings(file.path, damage, importer)) result.warnings.push_back(std::move(w));
    auto runs = importer.finish(damage, unknown);
    result.runs.insert(result.runs.end(), runs.begin(), runs.end());
  }
  // Kineto traces without a log: a run of their own.
  for (size_t k = 0; k < request.kineto.size(); ++k) {
    if (kineto_used[k]) continue;
    TorchTraceImporter importer(request.db, request.kineto[k], -1, 1);
    KinetoTarget target = importer.kineto_target();
    try {
      result.notes.push_back(kineto_note(request.kineto[k], import_kineto(request.kineto[k], target)));
    } catch (const Error& e) {
      result.errors.push_back(e.what());
    }
    auto runs = importer.finish(TraceDamage{}, 0);
    result.runs.insert(result.runs.end(), runs.begin(), runs.end());
  }
  return result;
}

}  // namespace tcprof::import
