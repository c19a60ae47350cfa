#include "profiler/chrome_trace.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tcprof {
namespace {

using nlohmann::json;

// Among slices with the same span, the enclosing kind sorts first.
enum class Level { Step = 0, Call = 1, Compile = 1, Graph = 2, Phase = 2, Kernel = 3 };

struct Slice {
  int tid = 0;
  int64_t start = 0, end = 0;
  Level level = Level::Kernel;
  std::string name, cat;
  json args;
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
      add({main_, s.start_ns, s.start_ns + s.duration_ns, Level::Step,
           fmt::format("step {}", s.step), "step", std::move(args)});
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
      add({main_, c.start_ns, c.start_ns + c.duration_ns, Level::Call,
           fmt::format("{} ({})", frame, c.path), "call", std::move(args)});
    }
    collect_compiles(frame_names, compile_labels);
    collect_kernels();
  }

  void write(std::vector<json>& events, int64_t base, ChromeTraceStats& stats, int64_t& flow_id) {
    auto us = [base](int64_t ns) { return static_cast<double>(ns - base) / 1e3; };
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid_}, {"tid", 0},
                      {"args", {{"name", fmt::format("tcprof run {} · {} {}", run_.id, run_.command,
                                                     run_.model_path)}}}});
    for (const auto& [key, t] : tracks_) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid_}, {"tid", t.tid},
                        {"args", {{"name", t.name}}}});
      events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", pid_},
                        {"tid", t.tid}, {"args", {{"sort_index", t.sort}}}});
      ++stats.tracks;
    }
    nest();
    for (auto& s : slices_) {
      json e = {{"ph", "X"}, {"name", s.name}, {"cat", s.cat}, {"pid", pid_}, {"tid", s.tid},
                {"ts", us(s.start)}, {"dur", static_cast<double>(s.end - s.start) / 1e3}};
      if (!s.args.is_null()) e["args"] = std::move(s.args);
      events.push_back(std::move(e));
      ++stats.slices;
    }
    for (auto& i : instants_) {
      events.push_back({{"ph", "i"}, {"s", "t"}, {"name", i.name}, {"cat", i.cat}, {"pid", pid_},
                        {"tid", i.tid}, {"ts", us(i.ts)}, {"args", std::move(i.args)}});
    }
    for (const auto& f : flows_) {
      ++flow_id;
      events.push_back({{"ph", "s"}, {"name", "launch"}, {"cat", "launch"}, {"id", flow_id},
                        {"pid", pid_}, {"tid", f.from_tid}, {"ts", us(f.from_ts)}});
      events.push_back({{"ph", "f"}, {"bp", "e"}, {"name", "launch"}, {"cat", "launch"},
                        {"id", flow_id}, {"pid", pid_}, {"tid", f.to_tid}, {"ts", us(f.to_ts)}});
      ++stats.flows;
    }
  }

  // Earliest timestamp this run will write (the trace's zero).
  int64_t earliest() const {
    int64_t t = INT64_MAX;
    for (const auto& s : slices_) t = std::min(t, s.start);
    for (const auto& i : instants_) t = std::min(t, i.ts);
    return t;
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

  void add(Slice s) { slices_.push_back(std::move(s)); }

  void collect_compiles(std::unordered_map<Id, std::string>& frame_names,
                        std::unordered_map<Id, std::string>& compile_labels) {
    int compiler = track("compiler", "compiler", 1);
    std::unordered_map<Id, int64_t> compile_start;
    for (const auto& c : reader_.compiles(run_.id)) {
      compile_start[c.id] = c.start_ns;
      add({compiler, c.start_ns, c.start_ns + c.duration_ns, Level::Compile,
           fmt::format("compile {}", c.compile_label), "compile",
           json{{"compile_id", c.compile_label}, {"frame", frame_names[c.frame_id]},
                {"reason", c.reason}, {"status", c.status}, {"cache_hit", c.cache_hit}}});
    }
    for (const auto& p : reader_.compile_phases(run_.id)) {
      add({compiler, p.start_ns, p.start_ns + p.duration_ns, Level::Phase, p.phase,
           "compile_phase", json{{"compile_id", compile_labels[p.compile_id]}}});
    }
    for (const auto& r : reader_.recompiles(run_.id)) {
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
      add({tid, seg.start, seg.end, Level::Graph, fmt::format("graph {}", label), "graph",
           json{{"graph_id", seg.graph_id}, {"call_id", seg.call_id}, {"compile", label}}});
    }
    seg = Segment{};
  }

  void collect_kernels() {
    std::map<int, Segment> segments;
    std::unordered_map<int64_t, std::pair<int, int64_t>> launches;  // correlation -> (tid, ts)
    std::vector<std::tuple<int64_t, int, int64_t>> targets;          // (correlation, tid, ts)
    reader_.for_each_kernel(run_.id, [&](const KernelRow& k) {
      int tid = kernel_track(k);
      json args = {{"kind", k.kind}, {"device", k.device}};
      if (k.call_id) args["call_id"] = k.call_id;
      if (k.graph_id) args["graph_id"] = k.graph_id;
      if (k.correlation_id) args["correlation_id"] = k.correlation_id;
      add({tid, k.start_ns, k.start_ns + k.duration_ns, Level::Kernel, k.name, k.kind, std::move(args)});
      if (k.correlation_id != 0) {
        if (is_api_kind(k.kind)) {
          launches[k.correlation_id] = {tid, k.start_ns};
        } else if (is_gpu_device(k.device)) {
          targets.emplace_back(k.correlation_id, tid, k.start_ns);
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
    std::vector<const Slice*> open;
    int tid = -1;
    for (auto& s : slices_) {
      if (s.tid != tid) {
        open.clear();
        tid = s.tid;
      }
      while (!open.empty() && open.back()->end <= s.start) open.pop_back();
      if (!open.empty() && s.end > open.back()->end) {
        s.end = open.back()->end;
        s.args["clipped"] = true;
      }
      open.push_back(&s);
    }
  }

  const RunReader& reader_;
  const RunRow& run_;
  int pid_;
  int main_ = 0;
  std::map<std::string, Track> tracks_;
  std::unordered_map<Id, std::string> graph_labels_;
  std::vector<Slice> slices_;
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
  std::vector<json> events;
  int64_t flow_id = 0;
  for (auto& t : traces) t->write(events, base, stats, flow_id);
  stats.events = events.size();
  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ns"},
              {"otherData", {{"producer", "tcprof"}, {"database", reader.path()}}}};
  out << doc.dump() << "\n";
  return stats;
}

}  // namespace tcprof
