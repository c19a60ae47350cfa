#include "analysis/baseline.h"

#include <fmt/format.h>

#include "core/error.h"

namespace tcprof::analysis {
namespace {

using nlohmann::json;

// The parts of a run's configuration that decide how many graphs and recompiles it produces.
constexpr const char* kWorkloadKeys[] = {"method", "inputs", "vary", "dynamic", "seed", "iters",
                                         "steps", "stance", "recompile_limit", "backend"};

}  // namespace

json workload_of(const RunRow& run) {
  json workload = json::object();
  json config = json::parse(run.config_json.empty() ? "{}" : run.config_json, nullptr, false);
  if (!config.is_object()) return workload;
  for (const char* key : kWorkloadKeys) {
    if (config.contains(key)) workload[key] = config[key];
  }
  return workload;
}

namespace {

[[noreturn]] void malformed(const std::string& origin, const std::string& what) {
  throw Error(ErrorKind::Input, fmt::format("baseline '{}' is malformed: {} (rewrite it with "
                                            "--update-baseline)", origin, what));
}

const json& field(const json& j, const char* key, json::value_t type, const std::string& origin,
                  const std::string& where) {
  auto it = j.find(key);
  bool ok = it != j.end() &&
            (it->type() == type || (type == json::value_t::number_integer &&
                                    it->type() == json::value_t::number_unsigned));
  if (!ok) malformed(origin, fmt::format("{} needs \"{}\"", where, key));
  return *it;
}

int64_t count_field(const json& j, const char* key, const std::string& origin, const std::string& where) {
  int64_t n = field(j, key, json::value_t::number_integer, origin, where).get<int64_t>();
  if (n < 0) malformed(origin, fmt::format("{} has a negative \"{}\"", where, key));
  return n;
}

std::string text_field(const json& j, const char* key, const std::string& origin, const std::string& where) {
  return field(j, key, json::value_t::string, origin, where).get<std::string>();
}

}  // namespace

Baseline baseline_from_run(const RunView& run) {
  Baseline b;
  b.model = file_basename(run.run.model_path);
  b.workload = workload_of(run.run);
  for (const auto& f : run.frames) {
    FrameView frame = f;
    frame.id = 0;
    frame.recompile_rows.clear();
    for (auto& site : frame.breaks) site.file = file_basename(site.file);
    b.frames.push_back(std::move(frame));
  }
  return b;
}

json baseline_to_json(const Baseline& b) {
  int64_t graphs = 0, breaks = 0, recompiles = 0, eager = 0;
  json frames = json::array();
  for (const auto& f : b.frames) {
    json sites = json::array();
    for (const auto& s : f.breaks) {
      sites.push_back({{"type", s.type}, {"id", s.break_id}, {"op", s.op}, {"file", s.file},
                       {"line", s.line}, {"source", normalise_source(s.source)}, {"module_path", s.module_path},
                       {"count", s.count}});
    }
    frames.push_back({{"frame", f.key}, {"graphs", f.graphs}, {"recompiles", f.recompiles},
                      {"eager_fallbacks", f.eager_fallbacks}, {"breaks", sites}});
    graphs += f.graphs;
    breaks += f.break_count();
    recompiles += f.recompiles;
    eager += f.eager_fallbacks;
  }
  // Totals are for people reading the file; the gate compares frames.
  return {{"tcprof_baseline", kBaselineVersion},
          {"model", b.model},
          {"workload", b.workload},
          {"totals", {{"graphs", graphs}, {"graph_breaks", breaks}, {"recompiles", recompiles},
                      {"eager_fallbacks", eager}}},
          {"frames", frames}};
}

Baseline baseline_from_json(const json& j, const std::string& origin) {
  if (!j.is_object()) malformed(origin, "expected a JSON object");
  auto version = j.find("tcprof_baseline");
  if (version == j.end() || !version->is_number_integer()) {
    malformed(origin, "no \"tcprof_baseline\" version (not a tcprof baseline?)");
  }
  if (version->get<int>() > kBaselineVersion) {
    throw Error(ErrorKind::Input, fmt::format("baseline '{}' has version {}; this tcprof reads up to {}",
                                              origin, version->get<int>(), kBaselineVersion));
  }
  Baseline b;
  if (j.contains("model") && j["model"].is_string()) b.model = j["model"].get<std::string>();
  if (j.contains("workload") && j["workload"].is_object()) b.workload = j["workload"];
  static const std::string kWholeFile = "the file";  // a named string: no temporary for `frames` to outlive
  const json& frames = field(j, "frames", json::value_t::array, origin, kWholeFile);
  for (size_t i = 0; i < frames.size(); ++i) {
    const json& jf = frames[i];
    std::string where = fmt::format("frames[{}]", i);
    if (!jf.is_object()) malformed(origin, where + " is not an object");
    FrameView f;
    f.key = text_field(jf, "frame", origin, where);
    f.graphs = count_field(jf, "graphs", origin, where);
    f.recompiles = count_field(jf, "recompiles", origin, where);
    f.eager_fallbacks = count_field(jf, "eager_fallbacks", origin, where);
    const json& sites = field(jf, "breaks", json::value_t::array, origin, where);
    for (size_t k = 0; k < sites.size(); ++k) {
      const json& js = sites[k];
      std::string at = fmt::format("{}.breaks[{}]", where, k);
      if (!js.is_object()) malformed(origin, at + " is not an object");
      BreakSite s;
      s.type = text_field(js, "type", origin, at);
      s.break_id = text_field(js, "id", origin, at);
      s.op = text_field(js, "op", origin, at);
      s.file = file_basename(text_field(js, "file", origin, at));
      s.source = normalise_source(text_field(js, "source", origin, at));
      s.module_path = text_field(js, "module_path", origin, at);
      s.count = count_field(js, "count", origin, at);
      if (js.contains("line") && js["line"].is_number_integer()) s.line = js["line"].get<int>();
      s.key = site_key(s.type, s.break_id, s.file, s.source, s.module_path);
      f.breaks.push_back(std::move(s));
    }
    b.frames.push_back(std::move(f));
  }
  return b;
}

}  // namespace tcprof::analysis
