#include "importers/trace_files.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tcprof::import {

namespace fs = std::filesystem;

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

int64_t feed_records(TraceLineReader& reader, TorchTraceImporter& importer, FieldErrors& bad,
                     const std::function<void()>& each) {
  TraceRecord record;
  int64_t n = 0;
  while (reader.next(record)) {
    ++n;
    try {
      importer.add(record);
    } catch (const nlohmann::json::exception& e) {
      if (bad.count++ == 0) bad.first = e.what();
    }
    if (each) each();
  }
  return n;
}

TraceDamage with_field_errors(TraceDamage damage, const FieldErrors& bad) {
  damage.bad_fields = bad.count;
  if (damage.first_problem.empty() && bad.count > 0) damage.first_problem = bad.first;
  return damage;
}

int64_t unknown_records(const TorchTraceImporter& importer) {
  int64_t unknown = 0;
  for (const auto& [kind, n] : importer.unknown_kinds()) unknown += n;
  return unknown;
}

std::vector<std::string> log_warnings(const std::string& path, const TraceDamage& damage,
                                      const TorchTraceImporter& importer) {
  std::vector<std::string> out;
  if (damage.damaged() > 0 || damage.gzip_cut) out.push_back(describe_damage(path, damage));
  if (const int64_t unknown = unknown_records(importer); unknown > 0) {
    std::string kinds;
    for (const auto& [kind, n] : importer.unknown_kinds()) kinds += fmt::format("{}{} x{}", kinds.empty() ? "" : ", ", kind, n);
    out.push_back(fmt::format("{}: {} records of kinds this tcprof does not know (a newer PyTorch?) were skipped: {}",
                              path, unknown, kinds));
  }
  return out;
}

}  // namespace tcprof::import
