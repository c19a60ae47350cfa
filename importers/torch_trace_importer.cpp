#include "importers/torch_trace_importer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "importers/graph_break_text.h"
#include "core/sha256.h"
#include "core/sqlite_db.h"
#include "core/store_open.h"

namespace tcprof::import {
namespace {

// Envelope keys that give context, not the record's kind.
bool is_context_key(const std::string& key) {
  return key == "frame_id" || key == "frame_compile_id" || key == "attempt" || key == "has_payload" ||
         key == "rank" || key == "compiled_autograd_id" || key == "compiled_autograd_graph_id";
}

int64_t seconds_to_ns(double s) { return static_cast<int64_t>(std::llround(s * 1e9)); }

std::string iso_utc(int64_t ns) {
  std::time_t t = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Ops of an FX graph as printed: every assignment that calls something.
int count_ops(const std::string& ir) {
  int ops = 0;
  size_t at = 0;
  while ((at = ir.find(" = torch.", at)) != std::string::npos) {
    ++ops;
    at += 9;
  }
  at = 0;
  while ((at = ir.find(" = operator.", at)) != std::string::npos) {
    ++ops;
    at += 12;
  }
  return ops;
}

std::string str_or(const nlohmann::json& j, const char* key, const std::string& fallback = {}) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// Graph records and the stage each is (graphs.kind).
const char* graph_kind(const std::string& key) {
  if (key == "dynamo_output_graph") return "dynamo";
  if (key == "aot_forward_graph") return "aot_forward";
  if (key == "aot_backward_graph") return "aot_backward";
  if (key == "aot_joint_graph") return "aot_joint";
  if (key == "aot_inference_graph") return "aot_inference";
  if (key == "inductor_post_grad_graph") return "inductor_post_grad";
  if (key == "optimize_ddp_split_child") return "ddp_split";
  return nullptr;
}

}  // namespace

bool known_record_kind(const std::string& kind) {
  static const std::set<std::string> known = {
      // imported
      "str", "dynamo_start", "chromium_event", "compilation_metrics", "dynamo_output_graph",
      "aot_forward_graph", "aot_backward_graph", "aot_joint_graph", "aot_inference_graph",
      "inductor_post_grad_graph", "optimize_ddp_split_child", "inductor_output_code",
      "dynamo_cpp_guards_str", "guard_added_fast", "symbolic_shape_specialization",
      "dynamo_side_effects", "artifact", "describe_tensor",
      // known, deliberately not imported (fake-tensor bookkeeping, runtime-only metrics, ...)
      "describe_storage", "describe_source", "create_symbol", "create_unbacked_symbol",
      "compilation_metrics_runtime", "bwd_compilation_metrics", "bwd_compilation_metrics_runtime",
      "dynamo_guards", "guard_added", "propagate_real_tensors_provenance", "expression_created",
      "optimize_ddp_split_graph", "compiled_autograd_graph", "aot_autograd_backward_compilation_metrics",
      "link", "graph_dump", "missing_fake_kernel", "mismatched_fake_kernel", "exported_program",
      "dynamo_error", "unbacked_symbol_created", "freeze_runtime_asserts"};
  return known.count(kind) > 0;
}

bool known_artifact_name(const std::string& name) {
  static const std::set<std::string> known = {
      // imported
      "inductor_post_grad_graph", "dynamo_graph_break_reason", "recompile_reasons", "fx_graph_cache_miss",
      "fx_graph_cache_hit", "fx_graph_cache_bypass", "triton_kernel_info", "dynamo_side_effects",
      "aotautograd_cache_miss", "aotautograd_cache_hit", "aotautograd_cache_bypass",
      // known, not imported: intermediate graphs, configs, provenance, the version (also in metrics)
      "torch_version",
      "fx_graph_runnable", "aot_forward_graph_fw_metadata", "aot_autograd_runtime_wrappers",
      "before_pre_grad_graph", "after_pre_grad_graph", "before_post_grad_graph", "before_joint_graph",
      "after_joint_graph", "torch._functorch.config", "inductor_provenance_tracking_node_mappings",
      "inductor_provenance_tracking_kernel_stack_traces"};
  if (known.count(name) > 0) return true;
  // Dynamo's bytecode of each resume function, before and after (2.15): FUNCTION_ORIGINAL_BYTECODE.
  auto ends = [&](const char* tail) {
    const size_t n = std::strlen(tail);
    return name.size() > n && name.compare(name.size() - n, n, tail) == 0;
  };
  return ends("_ORIGINAL_BYTECODE") || ends("_MODIFIED_BYTECODE");
}

struct TorchTraceImporter::Compile {
  Id id = 0;
  int frame = 0, frame_compile = 0;
  std::string label;
  int attempt = 0;
  bool closed = false, written = false;
  int64_t start_ns = 0, duration_ns = 0;
  std::string status = "incomplete";
  std::vector<RecompileReason> reasons;
  bool have_graph = false;
  GraphEvent graph;  // the inductor graph waiting for its output code and cache key
  std::map<std::string, std::vector<int64_t>> open_phases;  // chromium B events without their E
  std::unordered_map<std::string, Id> guard_by_expr;
  std::unordered_map<std::string, Id> tensor_guard;  // input name -> its TENSOR_MATCH guard
};

struct TorchTraceImporter::Session {
  std::unique_ptr<RunWriter> writer;
  ImportedRun stats;
  std::map<std::string, Compile> compiles;  // by label
  std::set<std::string> started;            // labels with a dynamo_start
  std::set<std::string> dynamo_begun;       // labels whose chromium "dynamo" span began
  std::unordered_map<int, Id> frames;
  std::string config_json, device;
  int64_t first_ns = 0;
  int64_t last_ns = 0;  // the latest time a record names: when the job was last seen
  bool interrupted = false;
  KinetoTarget target;
  std::set<std::string> user_files;  // recorded with the run when readable here (sources table)
};

TorchTraceImporter::TorchTraceImporter(std::string db_path, std::string trace_path, int rank, int world_size)
    : db_path_(std::move(db_path)), trace_path_(std::move(trace_path)), rank_(rank), world_size_(world_size) {}

TorchTraceImporter::~TorchTraceImporter() = default;

void TorchTraceImporter::start_session() {
  RunInfo info;
  info.command = "import";
  info.model_path = trace_path_;
  info.source = "torch_trace";
  info.rank = rank_ < 0 ? 0 : rank_;
  info.world_size = world_size_;
  info.device = "";
  session_ = std::make_unique<Session>();
  session_->writer = std::make_unique<RunWriter>(db_path_, info);
  session_->stats.db = db_path_;
  session_->stats.run_id = session_->writer->run_id();
  session_->stats.trace = trace_path_;
  session_->stats.rank = info.rank;
  session_->stats.world_size = world_size_;
}

TorchTraceImporter::Session& TorchTraceImporter::session() {
  if (!session_) start_session();
  return *session_;
}

TorchTraceImporter::Compile& TorchTraceImporter::compile_for(int frame, int frame_compile) {
  Session& s = session();
  std::string label = fmt::format("{}/{}", frame, frame_compile);
  auto [it, fresh] = s.compiles.try_emplace(label);
  if (fresh) {
    Compile& c = it->second;
    c.id = s.writer->next_id();
    c.frame = frame;
    c.frame_compile = frame_compile;
    c.label = label;
    s.target.compile_by_label[label] = c.id;
  }
  return it->second;
}

Id TorchTraceImporter::frame_for(int frame, const std::string& name, const std::string& file, int line) {
  Session& s = session();
  auto it = s.frames.find(frame);
  if (it != s.frames.end()) return it->second;
  FrameEvent f;
  f.id = s.writer->next_id();
  f.name = name.empty() ? fmt::format("frame {}", frame) : name;
  f.file = file;
  f.line = line;
  if (!f.file.empty()) s.user_files.insert(f.file);
  s.writer->record(f);
  s.frames[frame] = f.id;
  ++s.stats.frames;
  return f.id;
}

std::string TorchTraceImporter::resolve(const nlohmann::json& filename) const {
  if (filename.is_string()) return filename.get<std::string>();
  if (!filename.is_number_integer()) return {};
  auto it = strings_.find(filename.get<int64_t>());
  return it == strings_.end() ? std::string() : it->second;
}

// Guard comments print paths cut from the left ("nn/modules/linear.py"): the full path is the
// string-table entry that ends with it.
// The first component may be cut mid-name ("ork/project/model.py"), and a path rewritten since may
// share only its last components: the entry sharing the most whole trailing components wins.
std::string TorchTraceImporter::resolve_suffix(const std::string& cut) const {
  std::string text = cut;
  while (!text.empty() && (text.front() == '(' || text.front() == ' ')) text.erase(0, 1);
  if (text.empty() || text.front() == '<') return text;
  auto components = [](const std::string& p) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= p.size()) {
      size_t slash = p.find('/', at);
      if (slash == std::string::npos) slash = p.size();
      out.push_back(p.substr(at, slash - at));
      at = slash + 1;
    }
    return out;
  };
  std::vector<std::string> want = components(text);
  std::string best = text;
  size_t best_match = 0;
  for (const auto& [id, path] : strings_) {
    std::vector<std::string> have = components(path);
    size_t match = 0;
    while (match < want.size() && match < have.size() &&
           want[want.size() - 1 - match] == have[have.size() - 1 - match]) {
      ++match;
    }
    if (match > best_match) {
      best_match = match;
      best = path;
    }
  }
  return best;
}

// Guard expressions as recompile reasons print them drop the frame-locals wrapper:
// "scale == 1.0" is the guard "L['scale'] == 1.0".
static std::string normalise_guard(const std::string& expr) {
  std::string out;
  for (size_t i = 0; i < expr.size(); ++i) {
    if (expr.compare(i, 3, "L['") == 0) {
      size_t close = expr.find("']", i + 3);
      if (close != std::string::npos) {
        out += expr.substr(i + 3, close - i - 3);
        i = close + 1;
        continue;
      }
    }
    out += expr[i];
  }
  return out;
}

bool TorchTraceImporter::user_frame(const nlohmann::json& stack, std::string& file, int& line) const {
  if (!stack.is_array()) return false;
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    std::string f = resolve(it->value("filename", nlohmann::json()));
    if (f.empty() || is_library_path(f) || f == "<string>") continue;
    file = f;
    line = it->value("line", 0);
    return true;
  }
  return false;
}

void TorchTraceImporter::flush_graph(Compile& c) {
  if (!c.have_graph) return;
  Session& s = session();
  s.writer->record(c.graph);
  ++s.stats.graphs;
  c.have_graph = false;
}

void TorchTraceImporter::write_compile(Compile& c) {
  if (c.written) return;
  Session& s = session();
  c.written = true;
  Id frame = frame_for(c.frame, "", "", 0);
  s.target.frame_by_compile[c.id] = frame;
  CompileEvent e;
  e.id = c.id;
  e.frame_id = frame;
  e.compile_id = c.label;
  e.start_ns = c.start_ns;
  e.duration_ns = c.duration_ns;
  e.status = c.status;
  e.attempt = c.attempt;
  e.reason = c.frame_compile == 0 ? "first call" : (c.reasons.empty() ? "recompile" : c.reasons.front().message);
  s.writer->record(e);
  ++s.stats.compiles;
  if (c.status == "incomplete") ++s.stats.compiles_incomplete;
  if (c.frame_compile == 0) return;
  // The call that forced the recompile is not in the log: the recompile and its guard failures
  // share an id of their own so that readers still put them together.
  RecompileEvent r;
  r.frame_id = frame;
  r.call_id = s.writer->next_id();
  r.compile_id = c.id;
  r.reason = e.reason;
  r.cache_size = c.frame_compile;
  s.writer->record(r);
  ++s.stats.recompiles;
  for (const auto& reason : c.reasons) {
    GuardFailureEvent g;
    g.call_id = r.call_id;
    auto failed = s.compiles.find(reason.compile_label);
    if (failed != s.compiles.end()) {
      g.compile_id = failed->second.id;
      auto guard = failed->second.guard_by_expr.find(normalise_guard(reason.guard));
      if (!reason.guard.empty() && guard != failed->second.guard_by_expr.end()) g.guard_id = guard->second;
      // "tensor 'y' size mismatch ..." (2.11) or "tensor 'L['y']' size mismatch ..." (2.6): the
      // failed guard is the entry's TENSOR_MATCH on y. The name ends at the quote before a space.
      if (g.guard_id == 0 && reason.message.rfind("tensor '", 0) == 0) {
        size_t end = reason.message.find("' ", 8);
        std::string name = normalise_guard(reason.message.substr(8, end == std::string::npos ? std::string::npos : end - 8));
        auto tensor = failed->second.tensor_guard.find(name);
        if (tensor != failed->second.tensor_guard.end()) g.guard_id = tensor->second;
      }
    }
    g.expected = reason.expected;
    g.actual = reason.actual;
    g.message = reason.message;
    s.writer->record(g);
    ++s.stats.guard_failures;
  }
}

void TorchTraceImporter::on_chromium(Compile* c, const nlohmann::json& ev) {
  if (!ev.is_object()) return;
  Session& s = session();
  int64_t ts = ev.contains("ts") && ev["ts"].is_number() ? std::llround(ev["ts"].get<double>() * 1000.0) : 0;
  if (ts > 0 && (s.first_ns == 0 || ts < s.first_ns)) s.first_ns = ts;
  s.last_ns = std::max(s.last_ns, ts);
  // The compile id in args is authoritative: lazily compiled backward graphs log without context.
  const auto& args = ev.value("args", nlohmann::json::object());
  std::string label = args.is_object() ? str_or(args, "compile_id") : std::string();
  if (!label.empty()) {
    int f = 0, fc = 0;
    if (std::sscanf(label.c_str(), "%d/%d", &f, &fc) == 2) c = &compile_for(f, fc);
  }
  if (c == nullptr) return;
  std::string name = str_or(ev, "name");
  std::string ph = str_or(ev, "ph");
  if (ph == "B") {
    c->open_phases[name].push_back(ts);
    if (c->start_ns == 0) c->start_ns = ts;
  } else if (ph == "E") {
    auto& open = c->open_phases[name];
    if (open.empty()) return;
    s.writer->record(CompilePhaseEvent{c->id, name, open.back(), ts - open.back()});
    open.pop_back();
  } else if (ph == "X") {
    int64_t dur = ev.contains("dur") && ev["dur"].is_number() ? std::llround(ev["dur"].get<double>() * 1000.0) : 0;
    s.writer->record(CompilePhaseEvent{c->id, name, ts, dur});
  }
}

void TorchTraceImporter::on_metrics(Compile& c, const nlohmann::json& m) {
  Session& s = session();
  if (m.contains("start_time") && m["start_time"].is_number()) {
    int64_t start = seconds_to_ns(m["start_time"].get<double>());
    if (c.start_ns == 0 || start < c.start_ns) c.start_ns = start;
  }
  if (m.contains("entire_frame_compile_time_s") && m["entire_frame_compile_time_s"].is_number()) {
    c.duration_ns = seconds_to_ns(m["entire_frame_compile_time_s"].get<double>());
  }
  if (c.start_ns > 0) s.last_ns = std::max(s.last_ns, c.start_ns + c.duration_ns);
  bool failed = m.contains("fail_type") && !m["fail_type"].is_null();
  c.status = failed ? "compile_failed" : "ok";
  c.closed = true;
  std::string version = str_or(m, "pytorch_version");
  if (!version.empty()) s.stats.pytorch_version = version;
  if (s.config_json.empty()) {
    nlohmann::json config = nlohmann::json::object();
    for (const char* key : {"dynamo_config", "inductor_config", "compiler_config"}) {
      std::string text = str_or(m, key);
      if (text.empty()) continue;
      nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
      config[std::string(key).substr(0, std::string(key).size() - 7)] = parsed.is_discarded() ? nlohmann::json(text) : parsed;
    }
    if (!config.empty()) {
      config["pytorch_version"] = version;
      s.config_json = config.dump();
    }
  }
  write_compile(c);
}

void TorchTraceImporter::on_graph(Compile& c, const std::string& kind, const std::string& payload) {
  Session& s = session();
  GraphEvent g;
  g.id = s.writer->next_id();
  g.compile_id = c.id;
  g.kind = kind;
  g.ir = payload;
  g.op_count = count_ops(payload);
  if (kind != "inductor_post_grad") {
    s.writer->record(std::move(g));
    ++s.stats.graphs;
    return;
  }
  // Inductor's graph: its output code and FX cache key come in the records after it.
  flush_graph(c);
  c.graph = std::move(g);
  c.have_graph = true;
}

void TorchTraceImporter::on_artifact(Compile* c, const std::string& name, const TraceRecord& r) {
  Session& s = session();
  if (name == "inductor_post_grad_graph" && c != nullptr) {
    on_graph(*c, "inductor_post_grad", r.payload);
  } else if (name == "dynamo_graph_break_reason" && c != nullptr) {
    GraphBreakEvent e = parse_graph_break(r.payload);
    e.compile_id = c->id;
    if (!e.file.empty()) s.user_files.insert(e.file);
    s.writer->record(std::move(e));
    ++s.stats.graph_breaks;
  } else if (name == "recompile_reasons" && c != nullptr) {
    c->reasons = parse_recompile_reasons(r.payload);
  } else if ((name.rfind("aotautograd_cache_", 0) == 0 || name == "fx_graph_cache_bypass") && c != nullptr) {
    // A cache lookup is an instant on the compile's timeline: a phase of no length, at the time of
    // the latest event seen (artifacts carry no time of their own).
    s.writer->record(CompilePhaseEvent{c->id, name, s.last_ns, 0});
  } else if ((name == "fx_graph_cache_miss" || name == "fx_graph_cache_hit") && c != nullptr) {
    s.writer->record(CompilePhaseEvent{c->id, name, s.last_ns, 0});
    nlohmann::json j = nlohmann::json::parse(r.payload, nullptr, false);
    std::string key = j.is_object() ? str_or(j, "key") : std::string();
    if (!key.empty() && c->have_graph && c->graph.fx_key.empty()) {
      c->graph.fx_key = key;
      s.target.graph_by_fx_key[key] = c->graph.id;
    }
  } else if (name == "triton_kernel_info" && c != nullptr && c->have_graph) {
    nlohmann::json j = nlohmann::json::parse(r.payload, nullptr, false);
    if (j.is_object()) {
      for (const auto& [kernel, info] : j.items()) s.target.graph_by_kernel[kernel] = c->graph.id;
    }
  } else if (name == "dynamo_side_effects") {
    PerfHintEvent h;
    h.compile_id = c != nullptr ? c->id : 0;
    h.kind = "side_effects";
    h.message = r.payload.substr(0, 2000);
    s.writer->record(std::move(h));
  }
}

void TorchTraceImporter::add(const TraceRecord& r) {
  const nlohmann::json& env = r.envelope;
  std::string kind;
  for (const auto& [key, value] : env.items()) {
    if (!is_context_key(key)) {
      kind = key;
      break;
    }
  }
  if (kind == "str") {
    const auto& v = env["str"];
    if (v.is_array() && v.size() == 2 && v[0].is_string() && v[1].is_number_integer()) {
      strings_[v[1].get<int64_t>()] = v[0].get<std::string>();
    }
    return;
  }
  if (!known_record_kind(kind)) {
    ++unknown_[kind.empty() ? "(no kind)" : kind];
    return;
  }
  if (rank_ < 0 && env.contains("rank") && env["rank"].is_number_integer()) rank_ = env["rank"].get<int>();

  bool has_compile = env.contains("frame_id") && env["frame_id"].is_number_integer() &&
                     env.contains("frame_compile_id") && env["frame_compile_id"].is_number_integer();
  int frame = has_compile ? env["frame_id"].get<int>() : 0;
  int frame_compile = has_compile ? env["frame_compile_id"].get<int>() : 0;
  std::string label = fmt::format("{}/{}", frame, frame_compile);
  // The same compile id starting again: torch._dynamo.reset() began a new session. Its first
  // record is the chromium "dynamo" begin event, just before dynamo_start.
  nlohmann::json chromium;
  if (kind == "chromium_event") {
    chromium = nlohmann::json::parse(r.payload, nullptr, false);
    if (chromium.is_object() && chromium.value("ph", "") == "B" && chromium.value("name", "") == "dynamo") {
      const auto& args = chromium.value("args", nlohmann::json::object());
      std::string begun = args.is_object() ? str_or(args, "compile_id") : std::string();
      if (!begun.empty() && !session().dynamo_begun.insert(begun).second) {
        close_session();
        session().dynamo_begun.insert(begun);
      }
    }
  }
  if (kind == "dynamo_start" && session_ && session_->started.count(label) > 0) close_session();
  if (kind == "describe_tensor") {
    Session& s = session();
    if (s.device.empty() || s.device == "cpu") {
      std::string d = str_or(env["describe_tensor"], "device");
      size_t t = d.find("type='");
      if (t != std::string::npos) {
        std::string type = d.substr(t + 6, d.find('\'', t + 6) - t - 6);
        size_t idx = d.find("index=");
        s.device = idx == std::string::npos ? type : type + ":" + std::to_string(std::atoi(d.c_str() + idx + 6));
      }
    }
    return;
  }
  Compile* c = has_compile ? &compile_for(frame, frame_compile) : nullptr;
  if (c != nullptr && env.contains("attempt") && env["attempt"].is_number_integer()) {
    c->attempt = std::max(c->attempt, env["attempt"].get<int>());
  }
  Session& s = session();
  const nlohmann::json& body = env[kind];
  if (kind == "dynamo_start" && c != nullptr) {
    s.started.insert(label);
    const auto& stack = body.value("stack", nlohmann::json::array());
    if (stack.is_array() && !stack.empty()) {
      const auto& top = stack.back();
      frame_for(frame, top.value("name", ""), resolve(top.value("filename", nlohmann::json())), top.value("line", 0));
    }
  } else if (kind == "chromium_event") {
    on_chromium(c, chromium);
  } else if (kind == "compilation_metrics" && c != nullptr) {
    on_metrics(*c, body);
  } else if (const char* gk = graph_kind(kind); gk != nullptr && c != nullptr) {
    on_graph(*c, gk, r.payload);
  } else if (kind == "inductor_output_code" && c != nullptr) {
    if (c->have_graph && c->graph.code.empty()) {
      c->graph.code = r.payload;
    } else {
      GraphEvent g;
      g.id = s.writer->next_id();
      g.compile_id = c->id;
      g.kind = "inductor_output";
      g.code = r.payload;
      s.writer->record(std::move(g));
      ++s.stats.graphs;
    }
  } else if (kind == "dynamo_cpp_guards_str" && c != nullptr) {
    for (auto& leaf : parse_cpp_guards(r.payload)) {
      GuardEvent g;
      g.id = s.writer->next_id();
      g.compile_id = c->id;
      g.kind = leaf.kind;
      g.expr = leaf.expr;
      g.file = resolve_suffix(leaf.file);
      g.line = leaf.line;
      c->guard_by_expr.emplace(normalise_guard(g.expr), g.id);
      if (g.kind == "tensor_match") {
        std::string e = normalise_guard(g.expr);  // check_tensor(y, Tensor, ...)
        size_t open = e.find('(');
        if (open != std::string::npos) c->tensor_guard.emplace(e.substr(open + 1, e.find(',', open) - open - 1), g.id);
      }
      s.writer->record(std::move(g));
      ++s.stats.guards;
    }
  } else if (kind == "guard_added_fast" && c != nullptr) {
    GuardEvent g;
    g.id = s.writer->next_id();
    g.compile_id = c->id;
    g.kind = "shape_expr";
    g.expr = str_or(body, "expr");
    if (!user_frame(body.value("user_stack", nlohmann::json()), g.file, g.line)) {
      user_frame(body.value("stack", nlohmann::json()), g.file, g.line);
    }
    c->guard_by_expr.emplace(normalise_guard(g.expr), g.id);
    s.writer->record(std::move(g));
    ++s.stats.guards;
  } else if (kind == "symbolic_shape_specialization") {
    PerfHintEvent h;
    h.compile_id = c != nullptr ? c->id : 0;
    h.kind = "shape_specialization";
    h.op = str_or(body, "symbol");
    std::string sources = body.contains("sources") ? body["sources"].dump() : std::string("[]");
    h.message = fmt::format("{} specialized to {} ({}): the compile only serves this value", sources,
                            str_or(body, "value"), str_or(body, "reason"));
    if (!user_frame(body.value("user_stack", nlohmann::json()), h.file, h.line)) {
      user_frame(body.value("stack", nlohmann::json()), h.file, h.line);
    }
    s.writer->record(std::move(h));
  } else if (kind == "dynamo_side_effects") {
    on_artifact(c, "dynamo_side_effects", r);
  } else if (kind == "artifact") {
    const std::string name = str_or(body, "name");
    if (!known_artifact_name(name)) ++unknown_["artifact " + (name.empty() ? std::string("(no name)") : name)];
    on_artifact(c, name, r);
  }
}

void TorchTraceImporter::close_session() {
  if (!session_) return;
  Session& s = *session_;
  for (auto& [label, c] : s.compiles) {
    flush_graph(c);
    for (auto& [name, starts] : c.open_phases) {
      // Begun and never ended: the job stopped inside this phase.
      for (int64_t start : starts) s.writer->record(CompilePhaseEvent{c.id, name + " (unfinished)", start, 0});
    }
    if (!c.closed && s.started.count(label) > 0) s.interrupted = true;
    // Records with a compile id but no dynamo_start and no metrics are runtime work (lazy
    // backward compiles) of a compile of an earlier session or cut off: not a compile of its own.
    if (c.closed || s.started.count(label) > 0) write_compile(c);
  }
  // The user's files, as they are where the import runs (the CI checkout that ran the job), so
  // readers show source lines even where the file is gone. Libraries are not the user's code.
  for (const auto& file : s.user_files) {
    std::error_code ec;
    if (is_library_path(file) || !std::filesystem::is_regular_file(file, ec) ||
        std::filesystem::file_size(file, ec) > (size_t{4} << 20)) {
      continue;
    }
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in.bad()) s.writer->record(SourceEvent{file, sha256_hex(text.str()), text.str()});
  }
  s.writer->close(s.interrupted || stopped_early_ ? "interrupted" : "finished");
  update_run_row(true);
  const int rank = rank_ < 0 ? 0 : rank_;
  s.stats.rank = rank;
  s.stats.world_size = world_size_;
  done_.push_back(s.stats);
  session_.reset();
}

// What the run row can only learn from the records: version, config, device, start time; when
// closing also when the job was last seen (its last record), not when the import ran: an
// interrupted run says when it stopped.
void TorchTraceImporter::update_run_row(bool closing) {
  if (!session_) return;
  Session& s = *session_;
  auto db = open_store_for_writing(db_path_);
  auto st = db->prepare(
      "UPDATE runs SET libtorch_version=?, config_json=?, device=?, started_at=COALESCE(?, started_at), rank=?, "
      "finished_at=COALESCE(?, finished_at), last_event_at=COALESCE(?, last_event_at), world_size=? WHERE id=?");
  std::optional<std::string> started, last;
  if (s.first_ns > 0) started = iso_utc(s.first_ns);
  if (closing && s.last_ns > 0) last = iso_utc(s.last_ns);
  const int rank = rank_ < 0 ? 0 : rank_;
  const std::string config = s.config_json.empty() ? std::string("{}") : s.config_json;
  const std::string device = s.device.empty() ? std::string("cpu") : s.device;
  st.bind(1, s.stats.pytorch_version)
      .bind(2, config)
      .bind(3, device)
      .bind(4, started)
      .bind(5, rank)
      .bind(6, last)
      .bind(7, last)
      .bind(8, world_size_)
      .bind(9, s.stats.run_id)
      .run();
}

void TorchTraceImporter::flush() {
  if (session_) session_->writer->flush();
}

KinetoTarget TorchTraceImporter::kineto_target() {
  Session& s = session();
  s.target.writer = s.writer.get();
  s.target.kernels = &s.stats.kernels;
  return s.target;
}

std::vector<ImportedRun> TorchTraceImporter::finish(const TraceDamage& damage, int64_t unknown_records) {
  if (session_) {
    session_->writer->record(CounterEvent{"import.damaged_records", damage.damaged()});
    session_->writer->record(CounterEvent{"import.unknown_records", unknown_records});
    session_->stats.damaged_records = damage.damaged();
    session_->stats.unknown_records = unknown_records;
    close_session();
  }
  return std::move(done_);
}

}  // namespace tcprof::import
