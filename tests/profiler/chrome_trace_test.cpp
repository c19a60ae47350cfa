// `tcprof export --chrome`: the trace is checked against the Chrome Trace Event Format rules
// (phases, microsecond ts/dur, pid/tid, flow pairs with ids and binding points, nested slices).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/run_reader.h"
#include "core/run_writer.h"
#include "profiler/chrome_trace.h"
#include "samples/synthetic_run.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using nlohmann::json;
using testing::TempDir;

// A second run with GPU work: two calls, each launching a graph's kernel through the runtime API
// (correlation ids), a memcpy, and a CPU kernel on thread 1.
void write_gpu_run(const std::string& path) {
  RunInfo info;
  info.command = "run";
  info.model_path = "gpu_model.pt";
  info.device = "cuda:0";
  RunWriter w(path, info);
  FrameEvent frame{w.next_id(), "forward", "", "m.py", 1};
  w.record(frame);
  Id compile = w.next_id();
  w.record(CompileEvent{compile, frame.id, "0/0", "first call", 1'000'000, 500'000, "ok", false});
  w.record(CompilePhaseEvent{compile, "codegen", 1'100'000, 200'000});
  Id graph = w.next_id();
  w.record(GraphEvent{graph, compile, 3, "", ""});
  int64_t t = 2'000'000;
  int64_t correlation = 100;
  for (int c = 0; c < 2; ++c) {
    Id call = w.next_id();
    int64_t start = t;
    KernelEvent launch;
    launch.call_id = call;
    launch.graph_id = graph;
    launch.name_id = w.intern("cudaLaunchKernel");
    launch.kind_id = w.intern("cuda_runtime");
    launch.device_id = w.intern("cpu");
    launch.stream = 4242;
    launch.start_ns = t + 10'000;
    launch.duration_ns = 5'000;
    launch.correlation_id = ++correlation;
    w.record(launch);
    KernelEvent gpu = launch;
    gpu.name_id = w.intern("triton_fused_add");
    gpu.kind_id = w.intern("gpu");
    gpu.device_id = w.intern("cuda:0");
    gpu.stream = 7;
    gpu.start_ns = t + 20'000;
    gpu.duration_ns = 30'000;
    gpu.grid[0] = 128;
    gpu.block[0] = 256;
    w.record(gpu);
    KernelEvent copy = gpu;
    copy.name_id = w.intern("memcpy DtoH");
    copy.kind_id = w.intern("memcpy");
    copy.start_ns = t + 60'000;
    copy.duration_ns = 4'000;
    copy.correlation_id = 0;
    w.record(copy);
    KernelEvent cpu;
    cpu.call_id = call;
    cpu.graph_id = graph;
    cpu.name_id = w.intern("mm");
    cpu.kind_id = w.intern("extern");
    cpu.device_id = w.intern("cpu");
    cpu.stream = 1;
    cpu.start_ns = t + 12'000;
    cpu.duration_ns = 3'000;
    w.record(cpu);
    w.record(CallEvent{call, frame.id, compile, start, 100'000, "compiled", "[[8]]"});
    t += 200'000;
  }
}

struct Track {
  std::vector<std::pair<double, double>> slices;  // (ts, end)
};

// Checks every event against the format and returns the slices per (pid, tid).
std::map<std::pair<int, int>, Track> check_format(const json& doc) {
  std::map<std::pair<int, int>, Track> tracks;
  EXPECT_TRUE(doc.is_object());
  EXPECT_TRUE(doc.contains("traceEvents"));
  std::map<int64_t, int> starts, finishes;
  std::set<std::pair<int, int>> named;
  for (const auto& e : doc["traceEvents"]) {
    std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "X" || ph == "i" || ph == "s" || ph == "f" || ph == "M") << e.dump();
    EXPECT_TRUE(e.at("pid").is_number_integer()) << e.dump();
    EXPECT_TRUE(e.at("tid").is_number_integer()) << e.dump();
    EXPECT_TRUE(e.at("name").is_string()) << e.dump();
    std::pair<int, int> key{e["pid"].get<int>(), e["tid"].get<int>()};
    if (ph == "M") {
      if (e["name"] == "thread_name") named.insert(key);
      EXPECT_TRUE(e.at("args").is_object());
      continue;
    }
    EXPECT_TRUE(e.at("ts").is_number()) << e.dump();
    EXPECT_GE(e["ts"].get<double>(), 0.0) << e.dump();
    if (ph == "X") {
      EXPECT_TRUE(e.at("dur").is_number()) << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      double ts = e["ts"], dur = e["dur"];
      tracks[key].slices.emplace_back(ts, ts + dur);
    } else if (ph == "i") {
      EXPECT_TRUE(e["s"] == "t" || e["s"] == "p" || e["s"] == "g") << e.dump();
    } else if (ph == "s") {
      ++starts[e.at("id").get<int64_t>()];
    } else if (ph == "f") {
      EXPECT_EQ(e.value("bp", ""), "e") << e.dump();
      ++finishes[e.at("id").get<int64_t>()];
    }
  }
  EXPECT_EQ(starts.size(), finishes.size());
  for (const auto& [id, n] : starts) {
    EXPECT_EQ(n, 1) << "flow id " << id;
    EXPECT_EQ(finishes[id], 1) << "flow id " << id;
  }
  for (const auto& [key, track] : tracks) {
    EXPECT_TRUE(named.count(key)) << "track without thread_name: tid " << key.second;
  }
  // Slices on one track must nest: each one ends before the next sibling starts or lies inside.
  constexpr double eps = 1e-6;
  for (auto& [key, track] : tracks) {
    auto& s = track.slices;
    std::sort(s.begin(), s.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<double> open_ends;
    for (const auto& [ts, end] : s) {
      while (!open_ends.empty() && open_ends.back() <= ts + eps) open_ends.pop_back();
      if (!open_ends.empty()) {
        EXPECT_LE(end, open_ends.back() + eps) << "slice [" << ts << ", " << end
                                              << "] overlaps its parent on tid " << key.second;
      }
      open_ends.push_back(end);
    }
  }
  return tracks;
}

// The innermost X slice on the event's track whose span strictly contains its ts.
const json* innermost_slice_at(const json& doc, const json& event) {
  const json* best = nullptr;
  double ts = event["ts"];
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X" || e["pid"] != event["pid"] || e["tid"] != event["tid"]) continue;
    double start = e["ts"], end = start + e["dur"].get<double>();
    if (start < ts && ts < end && (!best || e["dur"].get<double>() < (*best)["dur"].get<double>())) {
      best = &e;
    }
  }
  return best;
}

json export_with_cli(const std::string& db, const std::string& out, const std::string& extra = "") {
  auto r = testing::run_command(std::string(TCPROF_BIN) + " export " + db + " --chrome " + out +
                                extra, true);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(out);
  return json::parse(in);
}

const json* find_event(const json& doc, const std::string& ph, const std::string& name) {
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == ph && e["name"] == name) return &e;
  }
  return nullptr;
}

TEST(ChromeTrace, SyntheticAndGpuRunsFollowTheFormat) {
  TempDir dir;
  std::string db = dir.file("run.db");
  write_synthetic_run(db, SyntheticRunOptions{});
  write_gpu_run(db);
  json doc = export_with_cli(db, dir.file("trace.json"));
  auto tracks = check_format(doc);
  EXPECT_GE(tracks.size(), 5u);  // main, compiler (x2 runs), CUDA API thread, GPU stream, thread 1

  // Calls enclose graph slices, which enclose the kernels.
  const json* call = find_event(doc, "X", "forward (compiled)");
  ASSERT_NE(call, nullptr);
  const json* graph = find_event(doc, "X", "graph 0/0");
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ((*graph)["tid"], (*call)["tid"]);
  const json* kernel = find_event(doc, "X", "fused_softmax_masked_fill");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ((*kernel)["cat"], "generated");
  EXPECT_EQ((*kernel)["args"]["kind"], "generated");

  // Compiles are slices with their reason; the recompile is an instant with its guard failure.
  const json* compile = find_event(doc, "X", "compile 0/1");
  ASSERT_NE(compile, nullptr);
  EXPECT_NE((*compile)["args"]["reason"].get<std::string>().find("size mismatch"), std::string::npos);
  const json* recompile = find_event(doc, "i", "recompile 0/1");
  ASSERT_NE(recompile, nullptr);
  EXPECT_EQ((*recompile)["args"]["guard_failures"][0]["expected"], "64");
  EXPECT_EQ((*recompile)["args"]["guard_failures"][0]["actual"], "96");
  EXPECT_DOUBLE_EQ((*recompile)["ts"].get<double>(), (*compile)["ts"].get<double>());

  // One flow arrow per GPU kernel launch, from the API call's track to the stream's.
  int flows = 0;
  std::map<int64_t, const json*> flow_start;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "s") flow_start[e["id"].get<int64_t>()] = &e, ++flows;
  }
  EXPECT_EQ(flows, 2);
  const json* gpu = find_event(doc, "X", "triton_fused_add");
  ASSERT_NE(gpu, nullptr);
  EXPECT_DOUBLE_EQ((*gpu)["dur"].get<double>(), 30.0);  // 30,000 ns in microseconds
  EXPECT_EQ((*gpu)["args"]["correlation_id"], 101);
  const json* launch = find_event(doc, "X", "cudaLaunchKernel");
  ASSERT_NE(launch, nullptr);
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "f") continue;
    const json& s = *flow_start[e["id"].get<int64_t>()];
    EXPECT_EQ(s["tid"], (*launch)["tid"]);
    EXPECT_EQ(e["tid"], (*gpu)["tid"]);
    EXPECT_LE(s["ts"].get<double>(), e["ts"].get<double>());
    // Each end lies inside the slice it binds to: the launch, and the kernel (bp=e).
    const json* from = innermost_slice_at(doc, s);
    const json* to = innermost_slice_at(doc, e);
    ASSERT_NE(from, nullptr);
    ASSERT_NE(to, nullptr);
    EXPECT_EQ((*from)["name"], "cudaLaunchKernel");
    EXPECT_EQ((*to)["name"], "triton_fused_add");
    EXPECT_EQ((*from)["args"]["correlation_id"], (*to)["args"]["correlation_id"]);
  }
  // Thread names say what each track is.
  std::set<std::string> names;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") names.insert(e["args"]["name"]);
  }
  EXPECT_TRUE(names.count("cuda:0 stream 7"));
  EXPECT_TRUE(names.count("host thread 4242 (CUDA API)"));
  EXPECT_TRUE(names.count("thread 1"));
  EXPECT_TRUE(names.count("compiler"));
}

TEST(ChromeTrace, RunOptionSelectsOneRun) {
  TempDir dir;
  std::string db = dir.file("run.db");
  write_synthetic_run(db, SyntheticRunOptions{});
  write_gpu_run(db);
  json doc = export_with_cli(db, dir.file("trace.json"), " --run 2");
  check_format(doc);
  std::set<int> pids;
  for (const auto& e : doc["traceEvents"]) pids.insert(e["pid"].get<int>());
  EXPECT_EQ(pids, std::set<int>{2});
}

TEST(ChromeTrace, OverrunningChildIsClippedToItsParent) {
  TempDir dir;
  std::string db = dir.file("run.db");
  {
    RunInfo info;
    info.command = "run";
    RunWriter w(db, info);
    Id call = w.next_id();
    w.record(CallEvent{call, 0, 0, 1'000, 10'000, "eager", ""});
    KernelEvent k;
    k.call_id = call;
    k.name_id = w.intern("late");
    k.kind_id = w.intern("eager");
    k.device_id = w.intern("cpu");
    k.start_ns = 9'000;
    k.duration_ns = 5'000;  // ends 3 us after its call
    w.record(k);
  }
  RunReader reader(db);
  std::ostringstream out;
  write_chrome_trace(reader, {reader.runs().at(0).id}, out);
  json doc = json::parse(out.str());
  check_format(doc);
  const json* k = find_event(doc, "X", "late");
  ASSERT_NE(k, nullptr);
  EXPECT_DOUBLE_EQ((*k)["dur"].get<double>(), 2.0);
  EXPECT_EQ((*k)["args"]["clipped"], true);
}

TEST(ChromeTrace, BadArgumentsExitTwo) {
  TempDir dir;
  std::string db = dir.file("run.db");
  write_synthetic_run(db, SyntheticRunOptions{});
  auto r = testing::run_command(std::string(TCPROF_BIN) + " export " + db, true);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = testing::run_command(std::string(TCPROF_BIN) + " export " + db + " --chrome " +
                           dir.file("t.json") + " --run 99", true);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no run 99"), std::string::npos) << r.output;
  r = testing::run_command(std::string(TCPROF_BIN) + " export " + dir.file("missing.db") +
                           " --chrome " + dir.file("t.json"), true);
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace tcprof

namespace tcprof {
namespace {

TEST(ChromeTrace, SummaryModeAggregatesRideOnTheirCall) {
  TempDir dir;
  std::string db = dir.file("run.db");
  Id call;
  {
    RunInfo info;
    info.command = "run";
    RunWriter w(db, info);
    call = w.next_id();
    w.record(CallEvent{call, 0, 0, 1'000, 10'000, "compiled", ""});
    KernelSummaryEvent s;
    s.call_id = call;
    s.name_id = w.intern("mm");
    s.kind_id = w.intern("extern");
    s.count = 4;
    s.total_ns = 8'000;
    s.min_ns = 1'000;
    s.max_ns = 3'000;
    w.record(s);
  }
  RunReader reader(db);
  std::ostringstream out;
  write_chrome_trace(reader, {reader.runs().at(0).id}, out);
  json doc = json::parse(out.str());
  check_format(doc);
  const json* c = find_event(doc, "X", "call (compiled)");
  ASSERT_NE(c, nullptr);
  const json& k = (*c)["args"]["kernel_summary"];
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0]["name"], "mm");
  EXPECT_EQ(k[0]["count"], 4);
  EXPECT_DOUBLE_EQ(k[0]["total_us"].get<double>(), 8.0);
}

}  // namespace
}  // namespace tcprof
