#include "cli/import/trace_import.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/import/kineto_importer.h"
#include "cli/import/trace_lines.h"
#include "core/error.h"

namespace tcprof::import {
namespace {

namespace fs = std::filesystem;

struct TraceFile {
  std::string path;
  int rank = -1;  // from the file name; -1: from the records
};

// torch.distributed writes one log per rank: dedicated_log_torch_trace_rank_N_<random>.log
int rank_from_name(const std::string& name) {
  static const std::regex rank_re(R"(dedicated_log_torch_trace_rank_(\d+)_)");
  std::smatch m;
  return std::regex_search(name, m, rank_re) ? std::stoi(m[1]) : -1;
}

bool is_log_name(const std::string& name) {
  auto ends = [&](const std::string& s) { return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
  return ends(".log") || ends(".log.gz");
}

std::vector<TraceFile> expand(const std::string& path, std::vector<std::string>& errors) {
  std::vector<TraceFile> out;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && is_log_name(name)) out.push_back({entry.path().string(), rank_from_name(name)});
    }
    std::sort(out.begin(), out.end(), [](const TraceFile& a, const TraceFile& b) {
      return a.rank != b.rank ? a.rank < b.rank : a.path < b.path;
    });
    if (out.empty()) errors.push_back(fmt::format("'{}' holds no TORCH_TRACE logs (*.log, *.log.gz)", path));
    return out;
  }
  if (!fs::exists(path, ec)) {
    errors.push_back(fmt::format("'{}' does not exist", path));
    return out;
  }
  out.push_back({path, rank_from_name(fs::path(path).filename().string())});
  return out;
}

std::string describe_damage(const std::string& path, const TraceDamage& d) {
  std::vector<std::string> parts;
  if (d.not_glog > 0) parts.push_back(fmt::format("{} not glog", d.not_glog));
  if (d.bad_json > 0) parts.push_back(fmt::format("{} not JSON", d.bad_json));
  if (d.bad_md5 > 0) parts.push_back(fmt::format("{} with a payload that fails its MD5", d.bad_md5));
  if (d.stray_payload > 0) parts.push_back(fmt::format("{} payloads without a record", d.stray_payload));
  if (d.bad_fields > 0) parts.push_back(fmt::format("{} with fields of the wrong JSON type", d.bad_fields));
  if (d.cut_at_end) parts.push_back("1 cut by the end of the file (truncated)");
  std::string what = parts.empty() ? std::string() : fmt::format("{} damaged records skipped (", d.damaged());
  for (size_t i = 0; i < parts.size(); ++i) what += (i ? ", " : "") + parts[i];
  if (!parts.empty()) what += ")";
  if (d.gzip_cut) what += std::string(what.empty() ? "" : "; ") + "the gzip stream is cut short";
  return fmt::format("{}: {}; first: {}", path, what, d.first_problem);
}

std::string kineto_note(const std::string& path, const KinetoCounts& c) {
  return fmt::format("{}: {} kernels ({} autotuning, {} in compiled graphs, {} eager), {} compiled-region calls, "
                     "{} FX graphs matched by cache key{}",
                     path, c.kernels, c.autotune, c.compiled, c.eager, c.regions, c.fx_keys_matched,
                     c.malformed > 0 ? fmt::format("; {} malformed events skipped (a field of the wrong type)", c.malformed)
                                     : std::string());
}

}  // namespace

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

ImportResult import_traces(const ImportRequest& request) {
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

  for (const auto& file : files) {
    TraceLineReader reader(file.path);
    TorchTraceImporter importer(request.db, file.path, file.rank, world_size);
    TraceRecord record;
    int64_t bad_fields = 0;
    std::string first_bad_field;
    while (reader.next(record)) {
      try {
        importer.add(record);
      } catch (const nlohmann::json::exception& e) {  // libFuzzer's torch_trace harness found these
        if (bad_fields++ == 0) first_bad_field = e.what();
      }
    }
    TraceDamage damage = reader.damage();
    damage.bad_fields = bad_fields;
    if (damage.first_problem.empty() && bad_fields > 0) damage.first_problem = first_bad_field;
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
    int64_t unknown = 0;
    for (const auto& [kind, n] : importer.unknown_kinds()) unknown += n;
    if (damage.damaged() > 0 || damage.gzip_cut) result.warnings.push_back(describe_damage(file.path, damage));
    if (unknown > 0) {
      std::string kinds;
      for (const auto& [kind, n] : importer.unknown_kinds()) kinds += fmt::format("{}{} x{}", kinds.empty() ? "" : ", ", kind, n);
      result.warnings.push_back(fmt::format(
          "{}: {} records of kinds this tcprof does not know (a newer PyTorch?) were skipped: {}", file.path,
          unknown, kinds));
    }
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
