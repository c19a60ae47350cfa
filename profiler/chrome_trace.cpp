#include "profiler/chrome_trace.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/recompiles.h"

namespace tcprof {
namespace {

using nlohmann::json;

// Among slices with the same span, the enclosing kind sorts first.
enum class Level : uint8_t { Step = 0, Call = 1, Compile = 1, Graph = 2, Phase = 2, Kernel = 3 };

constexpr uint32_t kNoArgs = UINT32_MAX;

// Strings are interned and JSON-escaped once: a run can hold millions of kernels with a few
// hundred distinct names.
class StringTable {
 public:
  uint32_t id(const std::string& s) {
    auto [it, inserted] = ids_.try_emplace(s, static_cast<uint32_t>(quoted_.size()));
    if (inserted) quoted_.push_back(json(s).dump());
    return it->second;
  }
  const std::string& quoted(uint32_t id) const { return quoted_[id]; }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> quoted_;
};

// Compact on purpose (one per kernel): kernels keep their fields inline; the few other slices
// (calls, graphs, compiles, phases, steps) point at a JSON object in RunTrace::args_.
struct Slice {
  int64_t start = 0, end = 0;
  int64_t call_id = 0, graph_id = 0, correlation_id = 0;
  int32_t tid = 0;
  uint32_t name = 0, cat = 0, device = 0;
  uint32_t args = kNoArgs;
  Level level = Level::Kernel;
  bool clipped = false;
};

struct Instant {
  int tid = 0;
  int64_t ts = 0;
  std::string name, cat;
  json args;
};

struct Flow {
  int from_tid = 0, to_tid = 0;
  int64_t from_ts = 0, to_ts = 0;
};

bool is_api_kind(const std::string& kind) { return kind == "cuda_runtime" || kind == "cuda_driver"; }
bool is_gpu_device(const std::string& device) { return device.rfind("cuda", 0) == 0; }

// Writes events as they are produced, through a buffer, instead of building one JSON document.
class EventStream {
 public:
  EventStream(std::ostream& out, int64_t base) : out_(out), base_(base) {}
  ~EventStream() { flush(); }

  // A timestamp: microseconds since the trace's zero, with the nanosecond digits, exactly.
  void ts(int64_t ns) { micros(ns - base_); }
  // A duration in microseconds, exactly.
  void dur(int64_t ns) { micros(ns); }
  void text(std::string_view s) { buf_.append(s.data(), s.data() + s.size()); }
  template <typename... Args>
  void format(fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(std::back_inserter(buf_), f, std::forward<Args>(args)...);
  }
  void begin_event() {
    if (events_++ > 0) buf_.push_back(',');
    buf_.push_back('\n');
  }
  void end_event() {
    if (buf_.size() > (1 << 20)) flush();
  }
  size_t events() const { return events_; }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  void micros(int64_t v) {
    if (v < 0) {
      buf_.push_back('-');
      v = -v;
    }
    fmt::format_to(std::back_inserter(buf_), "{}.{:03}", v / 1000, v % 1000);
  }

  std::ostream& out_;
  int64_t base_;
  fmt::memory_buffer buf_;
  size_t events_ = 0;
};

// Builds the events of one run; writes them with the run's pid.
class RunTrace {
 public:
  RunTrace(const RunReader& reader, const RunRow& run, int pid) : reader_(reader), run_(run), pid_(pid) {}

  void collect() {
    main_ = track("main", "main thread", 0);
    for (const auto& g : reader_.graphs(run_.id)) graph_labels_[g.id] = g.compile_label;
    std::unordered_map<Id, std::string> frame_names;
    for (const auto& f : reader_.frames(run_.id)) frame_names[f.id] = f.name;
    std::unordered_map<Id, std::string> compile_labels;
    for (const auto& c : reader_.compiles(run_.id)) compile_labels[c.id] = c.compile_label;

    for (const auto& s : reader_.steps(run_.id)) {
      json args = {{"step", s.step}};
      if (s.loss) args["loss"] = *s.loss;
      add(main_, s.start_ns, s.start_ns + s.duration_ns, Level::Step, fmt::format("step {}", s.step),
          "step", std::move(args));
    }
    // --profile summary keeps no launches to draw: each call carries its aggregates in args.
    std::unordered_map<Id, json> summaries;
    for (const auto& k : reader_.kernel_summaries(run_.id)) {
      auto& list = summaries[k.call_id];
      if (list.is_null()) list = json::array();
      list.push_back({{"name", k.name}, {"kind", k.kind}, {"count", k.count},
                      {"total_us", static_cast<double>(k.total_ns) / 1e3},
                      {"min_us", static_cast<double>(k.min_ns) / 1e3},
                      {"max_us", static_cast<double>(k.max_ns) / 1e3}});
    }
    for (const auto& c : reader_.calls(run_.id)) {
      std::string frame = frame_names.count(c.frame_id) ? frame_names[c.frame_id] : "call";
      json args = {{"call_id", c.id}, {"compile", compile_labels[c.compile_id]}, {"path", c.path},
                   {"input_shapes", c.input_shapes}};
      if (auto it = summaries.find(c.id); it != summaries.end()) args["kernel_summary"] = it->second;
      add(main_, c.start_ns, c.start_ns + c.duration_ns, Level::Call,
          fmt::format("{} ({})", frame, c.path), "call", std::move(args));
    }
    collect_compiles(frame_names, compile_labels);
    collect_kernels();
    nest();
  }

  // Earliest timestamp this run will write (the trace's zero).
  int64_t earliest() const {
    int64_t t = INT64_MAX;
    for (const auto& s : slices_) t = std::min(t, s.start);
    for (const auto& i : instants_) t = std::min(t, i.ts);
    return t;
  }

  void write(EventStream& out, ChromeTraceStats& stats, int64_t& flow_id) {
    out.begin_event();
    out.format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", pid_,
               json(fmt::format("tcprof run {} · {} {}", run_.id, run_.command, run_.model_path)).dump());
    for (const auto& [key, t] : tracks_) {
      out.begin_event();
      out.format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                 pid_, t.tid, json(t.name).dump());
      out.begin_event();
      out.format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                 pid_, t.tid, t.sort);
      ++stats.tracks;
    }
    for (const auto& s : slices_) {
      write_slice(out, s);
      ++stats.slices;
    }
    for (const auto& i : instants_) {
      out.begin_event();
      out.format(R"({{"ph":"i","s":"t","name":{},"cat":{},"pid":{},"tid":{},"ts":)",
                 json(i.name).dump(), json(i.cat).dump(), pid_, i.tid);
      out.ts(i.ts);
      out.format(R"(,"args":{}}})", i.args.dump());
    }
    for (const auto& f : flows_) {
      ++flow_id;
      out.begin_event();
      out.format(R"({{"ph":"s","name":"launch","cat":"launch","id":{},"pid":{},"tid":{},"ts":)",
                 flow_id, pid_, f.from_tid);
      out.ts(f.from_ts);
      out.text("}");
      out.begin_event();
      out.format(R"({{"ph":"f","bp":"e","name":"launch","cat":"launch","id":{},"pid":{},"tid":{},"ts":)",
                 flow_id, pid_, f.to_tid);
      out.ts(f.to_ts);
      out.text("}");
      out.end_event();
      ++stats.flows;
    }
  }

 private:
  struct Track {
    int tid = 0;
    std::string name;
    int sort = 0;
  };

  int track(const std::string& key, const std::string& name, int sort) {
    auto [it, inserted] = tracks_.try_emplace(key);
    if (inserted) it->second = {static_cast<int>(tracks_.size()), name, sort};
    return it->second.tid;
  }

  void add(int tid, int64_t start, int64_t end, Level level, const std::string& name,
           const std::string& cat, json args) {
    Slice s;
    s.tid = tid;
    s.start = start;
    s.end = end;
    s.level = level;
    s.name = strings_.id(name);
    s.cat = strings_.id(cat);
    s.args = static_cast<uint32_t>(args_.size());
    args_.push_back(std::move(args));
    slices_.push_back(s);
  }

  void write_slice(EventStream& out, const Slice& s) {
    out.begin_event();
    out.format(R"({{"ph":"X","name":{},"cat":{},"pid":{},"tid":{},"ts":)", strings_.quoted(s.name),
               strings_.quoted(s.cat), pid_, s.tid);
    out.ts(s.start);
    out.text(",\"dur\":");
    out.dur(s.end - s.start);
    if (s.args != kNoArgs) {
      json& args = args_[s.args];
      if (s.clipped) args["clipped"] = true;
      out.format(",\"args\":{}}}", args.dump());
    } else {
      out.format(R"(,"args":{{"kind":{},"device":{})", strings_.quoted(s.cat), strings_.quoted(s.device));
      if (s.call_id) out.format(",\"call_id\":{}", s.call_id);
      if (s.graph_id) out.format(",\"graph_id\":{}", s.graph_id);
      if (s.correlation_id) out.format(",\"correlation_id\":{}", s.correlation_id);
      if (s.clipped) out.text(",\"clipped\":true");
      out.text("}}");
    }
    out.end_event();
  }

  void collect_compiles(std::unordered_map<Id, std::string>& frame_names,
                        std::unordered_map<Id, std::string>& compile_labels) {
    int compiler = track("compiler", "compiler", 1);
    std::unordered_map<Id, int64_t> compile_start;
    for (const auto& c : reader_.compiles(run_.id)) {
      compile_start[c.id] = c.start_ns;
      add(compiler, c.start_ns, c.start_ns + c.duration_ns, Level::Compile,
          fmt::format("compile {}", c.compile_label), "compile",
          json{{"compile_id", c.compile_label}, {"frame", frame_names[c.frame_id]},
               {"reason", c.reason}, {"status", c.status}, {"cache_hit", c.cache_hit}});
    }
    for (const auto& p : reader_.compile_phases(run_.id)) {
      add(compiler, p.start_ns, p.start_ns + p.duration_ns, Level::Phase, p.phase, "compile_phase",
          json{{"compile_id", compile_labels[p.compile_id]}});
    }
    for (const auto& r : analysis::recompiles_with_failures(reader_, run_.id)) {
      json failures = json::array();
      for (const auto& f : r.failures) {
        failures.push_back({{"guard", f.guard_expr}, {"expected", f.expected},
                            {"actual", f.actual}, {"file", f.guard_file}, {"line", f.guard_line}});
      }
      instants_.push_back({compiler, compile_start[r.compile_id],
                           fmt::format("recompile {}", r.compile_label), "recompile",
                           json{{"frame", r.frame_name}, {"reason", r.reason},
                                {"cache_size", r.cache_size}, {"guard_failures", failures}}});
    }
  }

  int kernel_track(const KernelRow& k) {
    if (is_api_kind(k.kind)) {
      return track(fmt::format("api:{}", k.stream), fmt::format("host thread {} (CUDA API)", k.stream), 2);
    }
    if (is_gpu_device(k.device)) {
      return track(fmt::format("gpu:{}:{}", k.device, k.stream),
                   fmt::format("{} stream {}", k.device, k.stream), 100);
    }
    if (k.stream == 0) return main_;
    return track(fmt::format("cpu:{}", k.stream), fmt::format("thread {}", k.stream), 3);
  }

  // CPU kernels of one call and graph that run back to back form one graph slice.
  struct Segment {
    Id call_id = 0, graph_id = 0;
    int64_t start = 0, end = 0;
  };

  void close_segment(int tid, Segment& seg) {
    if (seg.graph_id != 0) {
      auto label = graph_labels_.count(seg.graph_id) ? graph_labels_[seg.graph_id] : std::string("?");
      add(tid, seg.start, seg.end, Level::Graph, fmt::format("graph {}", label), "graph",
          json{{"graph_id", seg.graph_id}, {"call_id", seg.call_id}, {"compile", label}});
    }
    seg = Segment{};
  }

  void collect_kernels() {
    std::map<int, Segment> segments;
    // Flow ends sit in the middle of their slices: an arrow bound exactly at a slice's start
    // could be read before the slice opens, depending on how a viewer orders equal timestamps.
    std::unordered_map<int64_t, std::pair<int, int64_t>> launches;  // correlation -> (tid, ts)
    std::vector<std::tuple<int64_t, int, int64_t>> targets;          // (correlation, tid, ts)
    reader_.for_each_kernel(run_.id, [&](const KernelRow& k) {
      int tid = kernel_track(k);
      Slice s;
      s.tid = tid;
      s.start = k.start_ns;
      s.end = k.start_ns + k.duration_ns;
      s.name = strings_.id(k.name);
      s.cat = strings_.id(k.kind);
      s.device = strings_.id(k.device);
      s.call_id = k.call_id;
      s.graph_id = k.graph_id;
      s.correlation_id = k.correlation_id;
      slices_.push_back(s);
      if (k.correlation_id != 0) {
        if (is_api_kind(k.kind)) {
          launches[k.correlation_id] = {tid, k.start_ns + k.duration_ns / 2};
        } else if (is_gpu_device(k.device)) {
          targets.emplace_back(k.correlation_id, tid, k.start_ns + k.duration_ns / 2);
        }
      }
      if (is_api_kind(k.kind) || is_gpu_device(k.device)) return;
      Segment& seg = segments[tid];
      if (seg.graph_id != k.graph_id || seg.call_id != k.call_id) {
        close_segment(tid, seg);
        seg = {k.call_id, k.graph_id, k.start_ns, k.start_ns};
      }
      seg.end = std::max(seg.end, k.start_ns + k.duration_ns);
    });
    for (auto& [tid, seg] : segments) close_segment(tid, seg);
    for (const auto& [correlation, tid, ts] : targets) {
      auto it = launches.find(correlation);
      if (it != launches.end()) flows_.push_back({it->second.first, tid, it->second.second, ts});
    }
  }

  // Sorts each track's slices so that parents come before children, and clips children that
  // overrun their parent so every track is a proper tree of slices.
  void nest() {
    std::stable_sort(slices_.begin(), slices_.end(), [](const Slice& a, const Slice& b) {
      if (a.tid != b.tid) return a.tid < b.tid;
      if (a.start != b.start) return a.start < b.start;
      if (a.end != b.end) return a.end > b.end;
      return a.level < b.level;
    });
    std::vector<int64_t> open_ends;
    int tid = -1;
    for (auto& s : slices_) {
      if (s.tid != tid) {
        open_ends.clear();
        tid = s.tid;
      }
      while (!open_ends.empty() && open_ends.back() <= s.start) open_ends.pop_back();
      if (!open_ends.empty() && s.end > open_ends.back()) {
        s.end = open_ends.back();
        s.clipped = true;
      }
      open_ends.push_back(s.end);
    }
  }

  const RunReader& reader_;
  const RunRow& run_;
  int pid_;
  int main_ = 0;
  std::map<std::string, Track> tracks_;
  std::unordered_map<Id, std::string> graph_labels_;
  StringTable strings_;
  std::vector<Slice> slices_;
  std::vector<json> args_;
  std::vector<Instant> instants_;
  std::vector<Flow> flows_;
};

}  // namespace

ChromeTraceStats write_chrome_trace(const RunReader& reader, const std::vector<Id>& run_ids,
                                    std::ostream& out) {
  ChromeTraceStats stats;
  std::vector<RunRow> runs;
  for (Id id : run_ids) {
    if (auto r = reader.run(id)) runs.push_back(*r);
  }
  std::vector<std::unique_ptr<RunTrace>> traces;
  int64_t base = INT64_MAX;
  for (const auto& run : runs) {
    traces.push_back(std::make_unique<RunTrace>(reader, run, static_cast<int>(run.id)));
    traces.back()->collect();
    base = std::min(base, traces.back()->earliest());
  }
  if (base == INT64_MAX) base = 0;
  out << "{\"traceEvents\":[";
  {
    EventStream events(out, base);
    int64_t flow_id = 0;
    for (auto& t : traces) t->write(events, stats, flow_id);
    stats.events = events.events();
  }
  out << "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"tcprof\",\"database\":"
      << json(reader.path()).dump() << "}}\n";
  return stats;
}

}  // namespace tcprof
