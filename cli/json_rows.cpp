#include "cli/json_rows.h"

namespace tcprof::json_rows {

using nlohmann::json;

json run(const RunRow& r) {
  json config = json::object();
  if (!r.config_json.empty()) config = json::parse(r.config_json, nullptr, false);
  if (config.is_discarded()) config = r.config_json;
  return {{"id", r.id},
          {"started_at", r.started_at},
          {"finished_at", r.finished_at},
          {"command", r.command},
          {"model_path", r.model_path},
          {"model_sha256", r.model_sha256},
          {"stance", r.stance},
          {"config", config},
          {"libtorch_version", r.libtorch_version},
          {"device", r.device},
          {"status", r.status},
          {"status_inferred", r.status_inferred},
          {"last_event_at", r.last_event_at},
          {"dropped_events", r.dropped_events},
          {"source", r.source},
          {"rank", r.rank},
          {"world_size", r.world_size}};
}

json summary(const analysis::RunSummary& m) {
  const RunCounts& s = m.counts;
  return {{"frames", s.frames},
          {"compiles", s.compiles},
          {"graphs", s.graphs},
          {"graph_breaks", s.graph_breaks},
          {"break_sites", m.break_sites},
          {"guards", s.guards},
          {"guard_failures", s.guard_failures},
          {"recompiles", s.recompiles},
          {"recompile_limit_hits", s.recompile_limit_hits},
          {"calls", s.calls},
          {"eager_calls", s.eager_calls},
          {"kernels", s.kernels},
          {"steps", s.steps},
          {"perf_hints", s.perf_hints},
          {"compile_time_ms", static_cast<double>(s.compile_time_ns) / 1e6},
          {"ms_per_call", m.ms_per_call},
          {"steady_median_ms_per_call", m.call_timing.has_steady() ? json(m.call_timing.steady_median_ns / 1e6)
                                                                   : json(nullptr)},
          {"mean_ms_per_call_incl_compile", m.call_timing.mean_incl_compile_ns / 1e6},
          {"ms_per_step", m.ms_per_step},
          {"ms_per_step_forward", m.ms_per_step_forward},
          {"ms_per_step_backward", m.ms_per_step_backward},
          {"ms_per_step_optimizer", m.ms_per_step_optimizer},
          {"peak_gpu_bytes", m.peak_gpu_bytes}};
}

json break_site(const analysis::BreakSite& b) {
  json stack = json::parse(b.stack_json.empty() ? "[]" : b.stack_json, nullptr, false);
  if (stack.is_discarded()) stack = json::array();
  return {{"type", b.type},   {"id", b.break_id},     {"op", b.op},
          {"reason", b.reason}, {"hint", b.hint},     {"file", b.file},
          {"line", b.line},   {"column", b.col},      {"source", b.source},
          {"module_path", b.module_path}, {"stack", stack}, {"count", b.count}};
}

json guard_failure(const GuardFailureRow& f) {
  return {{"call_id", f.call_id},       {"compile_id", f.compile_label},
          {"guard_kind", f.guard_kind}, {"guard", f.guard_expr},
          {"file", f.guard_file},       {"line", f.guard_line},
          {"expected", f.expected},     {"actual", f.actual},
          {"message", f.message}};
}

json recompile(const RecompileRow& r) {
  json failures = json::array();
  for (const auto& f : r.failures) failures.push_back(guard_failure(f));
  return {{"frame", r.frame_name},   {"compile_id", r.compile_label}, {"reason", r.reason},
          {"cache_size", r.cache_size}, {"guard_failures", failures}};
}

json kernel_stats(const analysis::KernelStats& k) {
  return {{"name", k.name},          {"kind", k.kind},
          {"device", k.device},      {"time_percent", k.time_percent},
          {"total_ns", k.total_ns},  {"instances", k.instances},
          {"avg_ns", k.avg_ns},      {"median_ns", k.median_ns},
          {"min_ns", k.min_ns},      {"max_ns", k.max_ns},
          {"stddev_ns", k.stddev_ns}};
}

json perf_hint(const PerfHintRow& h) {
  return {{"kind", h.kind}, {"op", h.op}, {"message", h.message}, {"file", h.file},
          {"line", h.line}};
}

}  // namespace tcprof::json_rows
