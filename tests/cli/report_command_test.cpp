// `tcprof report` as a user runs it: the real binary on a database written by the real store.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/run_writer.h"
#include "samples/synthetic_run.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::replace_all;
using testing::run_command;
using testing::TempDir;

void expect_golden(const std::string& actual, const std::string& golden_name) {
  std::string golden_path = std::string(TCPROF_GOLDEN_DIR) + "/" + golden_name;
  if (std::getenv("TCPROF_UPDATE_GOLDEN")) {
    std::ofstream(golden_path) << actual;
    GTEST_SKIP() << "updated " << golden_path;
  }
  std::string expected = testing::read_file(golden_path);
  ASSERT_FALSE(expected.empty()) << "missing golden file " << golden_path
                                 << " (run with TCPROF_UPDATE_GOLDEN=1 to create it)";
  EXPECT_EQ(actual, expected) << "to accept the new output: TCPROF_UPDATE_GOLDEN=1 ctest -R Report";
}

TEST(ReportCommand, TextMatchesGolden) {
  TempDir dir;
  std::string db = dir.file("run.db");
  write_synthetic_run(db, SyntheticRunOptions{});
  auto r = run_command("COLUMNS=80 " + std::string(TCPROF_BIN) + " report " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_golden(replace_all(r.output, db, "<DB>"), "report_synthetic.txt");
  // The report must read well in an 80-column terminal.
  size_t start = 0;
  while (start < r.output.size()) {
    size_t end = r.output.find('\n', start);
    std::string line = replace_all(r.output.substr(start, end - start), db, "<DB>");
    size_t columns = 0;
    for (unsigned char c : line) columns += (c & 0xC0) != 0x80;
    EXPECT_LE(columns, 80u) << line;
    start = end + 1;
  }
}

TEST(ReportCommand, JsonCarriesSectionsAndCounts) {
  TempDir dir;
  std::string db = dir.file("run.db");
  write_synthetic_run(db, SyntheticRunOptions{});
  auto r = run_command("COLUMNS=80 " + std::string(TCPROF_BIN) + " report --json " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j["runs"].size(), 1u);
  const auto& run = j["runs"][0];
  EXPECT_EQ(run["summary"]["recompiles"], 1);
  EXPECT_EQ(run["summary"]["graph_breaks"], 2);
  EXPECT_EQ(run["summary"]["break_sites"], 1);
  EXPECT_EQ(run["break_sites"][0]["id"], "TCB0004");
  EXPECT_EQ(run["break_sites"][0]["line"], 57);
  EXPECT_EQ(run["break_sites"][0]["count"], 2);
  EXPECT_EQ(run["recompiles"][0]["guard_failures"][0]["expected"], "64");
  EXPECT_EQ(run["recompiles"][0]["guard_failures"][0]["actual"], "96");
  EXPECT_EQ(run["config"]["recompile_limit"], 8);
  EXPECT_EQ(run["summary"]["kernels"], 2000);
  // The GUI overview's "Biggest problems", ranked the same way (analysis/problems.h).
  ASSERT_EQ(run["problems"].size(), 3u);
  EXPECT_EQ(run["problems"][0]["kind"], "recompiles");
  EXPECT_EQ(run["problems"][0]["view"], "recompiles");
  EXPECT_EQ(run["problems"][1]["kind"], "graph_breaks");
  EXPECT_EQ(run["problems"][1]["title"], "2 graph breaks at 1 site");
  EXPECT_GT(run["problems"][0]["score"].get<double>(), run["problems"][1]["score"].get<double>());
}

TEST(ReportCommand, BadInputsExitTwoWithOneClearLine) {
  TempDir dir;
  std::string junk = dir.file("junk.db");
  std::ofstream(junk) << std::string(200, 'x');
  for (const std::string& args : {"report " + dir.file("missing.db"), "report " + junk,
                                  std::string("report"), std::string("report --bogus x.db"),
                                  std::string("no-such-command")}) {
    auto r = run_command(std::string(TCPROF_BIN) + " " + args + " 2>&1 >/dev/null");
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("tcprof"), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << ": " << r.output;
  }
}

TEST(ReportCommand, UnknownRunIsUsageError) {
  TempDir dir;
  std::string db = dir.file("run.db");
  write_synthetic_run(db, SyntheticRunOptions{});
  auto r = run_command("COLUMNS=80 " + std::string(TCPROF_BIN) + " report --run 42 " + db, true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("no run 42"), std::string::npos) << r.output;
}

TEST(VersionFlag, NamesEveryComponent) {
  auto r = run_command(std::string(TCPROF_BIN) + " --version");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("LibTorch "), std::string::npos) << r.output;  // 1.13 (Debian 12) or 2.x
  EXPECT_NE(r.output.find("SQLite 3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("CUDA/CUPTI support"), std::string::npos) << r.output;
  // Built by tcprof's CMake, libstdc++ comes first: no restart, calls go to libstdc++.
  EXPECT_NE(r.output.find("libstdc++: std::filesystem calls go to libstdc++"), std::string::npos) << r.output;
}

// A CUDA run as CUPTI records it: GPU kernels first by time on the GPU, the host's kernels next,
// CUDA API calls in a table of their own. Ranked together, a one-off 113 ms
// cudaDeviceGetStreamPriorityRange came first, above every GPU kernel (seen on an H100).
TEST(ReportCommand, KernelsOfACudaRunPutGpuWorkFirstAndApiCallsApart) {
  TempDir dir;
  std::string db = dir.file("cuda.db");
  {
    RunInfo info;
    info.command = "run";
    info.device = "cuda:0";
    RunWriter w(db, info);
    auto add = [&](const char* name, const char* kind, const char* device, int n, int64_t ns, Id call = 1) {
      KernelEvent e;
      e.call_id = call;
      e.name_id = w.intern(name);
      e.kind_id = w.intern(kind);
      e.device_id = w.intern(device);
      for (int i = 0; i < n; ++i) {
        e.start_ns = 1000 + i * 100000;
        e.duration_ns = ns;
        w.record(e);
      }
    };
    add("cudaDeviceGetStreamPriorityRange", "cuda_runtime", "cpu", 1, 113'000'000);
    add("cudaLaunchKernel", "cuda_runtime", "cpu", 40, 4'000);
    add("ampere_sgemm_128x64_tn", "gpu", "cuda:0", 20, 90'000);
    add("triton_poi_fused_relu_0", "gpu", "cuda:0", 20, 6'000);
    add("memcpy DtoH", "memcpy", "cuda:0", 20, 3'000);
    add("aten::item", "eager", "cpu", 20, 8'000);
    // The inputs, copied before each call (call 0): GPU time, but no call's.
    add("memcpy HtoD", "memcpy", "cuda:0", 20, 2'000'000, 0);
  }
  auto r = run_command("COLUMNS=100 " + std::string(TCPROF_BIN) + " report --kernels " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  size_t gpu = r.output.find("GPU kernels, copies and fills (time on the GPU) (top 3 of 3");
  size_t host = r.output.find("CPU kernels and eager ops (top 1 of 1");
  size_t api = r.output.find("CUDA API calls (time on the CPU) (top 2 of 2");
  ASSERT_NE(gpu, std::string::npos) << r.output;
  ASSERT_NE(host, std::string::npos) << r.output;
  ASSERT_NE(api, std::string::npos) << r.output;
  size_t outside = r.output.find("Copies to the GPU outside calls (inputs, targets, weights; in no call's time) (top 1 of 1");
  ASSERT_NE(outside, std::string::npos) << r.output;
  EXPECT_LT(gpu, host);
  EXPECT_LT(host, api);
  EXPECT_LT(api, outside);
  EXPECT_GT(r.output.find("memcpy HtoD"), outside);  // 40 ms of copies, not in the GPU table
  // The GEMM heads the report; the 113 ms API call appears only in its own table.
  size_t gemm = r.output.find("ampere_sgemm_128x64_tn");
  size_t priority = r.output.find("cudaDeviceGetStreamPriorityRange");
  EXPECT_LT(gpu, gemm);
  EXPECT_LT(gemm, host);
  EXPECT_GT(priority, api);
  // Shares are within each table: the GEMM is 1.80 ms of 1.98 ms of GPU time.
  EXPECT_NE(r.output.find(" 90.9%   1.80 ms"), std::string::npos) << r.output;

  auto j = run_command(std::string(TCPROF_BIN) + " report --kernels --json " + db);
  ASSERT_EQ(j.exit_code, 0) << j.output;
  auto parsed = nlohmann::json::parse(j.output);
  std::map<std::string, std::string> places;
  for (const auto& k : parsed.at("runs").at(0).at("kernel_report").at("kernels")) {
    places[k.at("name").get<std::string>()] = k.at("place").get<std::string>();
  }
  EXPECT_EQ(places["ampere_sgemm_128x64_tn"], "gpu");
  EXPECT_EQ(places["memcpy DtoH"], "gpu");
  EXPECT_EQ(places["aten::item"], "host");
  EXPECT_EQ(places["cudaDeviceGetStreamPriorityRange"], "cuda_api");
  EXPECT_EQ(places["memcpy HtoD"], "outside_calls");
}

// Per graph of a CUDA run: GPU busy time, copies each way with bytes, the host's launch cost, the
// GPU's idle gaps within a call, and the peak GPU memory of the calls (report and --json).
TEST(ReportCommand, KernelsOfACudaRunShowEachGraphsCopiesLaunchesIdleAndPeakMemory) {
  TempDir dir;
  std::string db = dir.file("cuda-graphs.db");
  {
    RunInfo info;
    info.command = "run";
    info.device = "cuda:0";
    RunWriter w(db, info);
    Id compile = w.next_id();
    w.record(CompileEvent{compile, 0, "0/0", "first call", 0, 10, "ok", false});
    Id graph = w.next_id();
    w.record(GraphEvent{graph, compile, 3, "", ""});
    for (int call = 1; call <= 2; ++call) {
      int64_t base = call * 1'000'000;
      CallEvent c;
      c.id = w.next_id();
      c.start_ns = base;
      c.duration_ns = 500'000;
      c.path = "compiled";
      c.peak_gpu_bytes = int64_t{call * 9} << 20;
      w.record(c);
      auto add = [&](const char* name, const char* kind, const char* device, int64_t start, int64_t ns, int64_t bytes) {
        KernelEvent e;
        e.call_id = c.id;
        e.graph_id = graph;
        e.name_id = w.intern(name);
        e.kind_id = w.intern(kind);
        e.device_id = w.intern(device);
        e.start_ns = base + start;
        e.duration_ns = ns;
        e.bytes = bytes;
        w.record(e);
      };
      add("memcpy HtoD", "memcpy", "cuda:0", 0, 10'000, 4096);
      add("cudaLaunchKernel", "cuda_runtime", "cpu", 5'000, 7'000, 0);
      add("sgemm", "gpu", "cuda:0", 30'000, 100'000, 0);  // 20 us idle before it
      add("memcpy DtoH", "memcpy", "cuda:0", 130'000, 2'000, 1 << 20);
    }
  }
  auto r = run_command("COLUMNS=120 " + std::string(TCPROF_BIN) + " report --kernels " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("GPU time by graph"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("graph 2 (compile 0/0)  "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("8.00 KiB in 20.0 us"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2.00 MiB in 4.0 us"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("peak GPU memory in a call: 18.0 MiB"), std::string::npos) << r.output;

  auto plain = run_command(std::string(TCPROF_BIN) + " report " + db);
  EXPECT_NE(plain.output.find("peak GPU memory 18.0 MiB"), std::string::npos) << plain.output;

  auto j = run_command(std::string(TCPROF_BIN) + " report --kernels --json " + db);
  ASSERT_EQ(j.exit_code, 0) << j.output;
  auto run = nlohmann::json::parse(j.output).at("runs").at(0);
  EXPECT_EQ(run.at("summary").at("peak_gpu_bytes"), int64_t{18} << 20);
  const auto& report = run.at("kernel_report");
  EXPECT_EQ(report.at("peak_gpu_bytes"), int64_t{18} << 20);
  ASSERT_EQ(report.at("gpu_graphs").size(), 1u);
  const auto& g = report.at("gpu_graphs")[0];
  EXPECT_EQ(g.at("compile_id"), "0/0");
  EXPECT_EQ(g.at("calls"), 2);
  EXPECT_EQ(g.at("kernels"), 2);
  EXPECT_EQ(g.at("kernel_ns"), 200'000);
  EXPECT_EQ(g.at("htod").at("bytes"), 8192);
  EXPECT_EQ(g.at("dtoh").at("bytes"), 2 << 20);
  EXPECT_EQ(g.at("launch_ns"), 14'000);
  EXPECT_EQ(g.at("idle_ns"), 40'000);
  EXPECT_EQ(g.at("idle_exact"), true);
}

}  // namespace
}  // namespace tcprof
