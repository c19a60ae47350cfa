// `tcprof explain` and `tcprof run` as users and scripts call them: JSON keys per PRODUCT.md and
// what the database holds afterwards.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "analysis/break_sites.h"
#include "core/run_reader.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::run_command;
using testing::sample;
using testing::TempDir;

TEST(ExplainCommand, JsonHasTheContractKeys) {
  TempDir dir;
  std::string db = dir.file("explain.db");
  auto r = run_command(std::string(TCPROF_BIN) + " explain " + sample("submodule_break") +
                       " --input 'f32[4,8]' --json --db " + db + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  for (const char* key : {"graph_count", "graph_break_count", "op_count", "graphs", "breaks", "guards", "compile_time_ms"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["graph_count"], 3);
  EXPECT_EQ(j["graph_break_count"], 2);
  const auto& b = j["breaks"][0];
  for (const char* key : {"type", "id", "op", "reason", "hint", "file", "line", "column", "source", "module_path", "stack"}) {
    EXPECT_TRUE(b.contains(key)) << key;
  }
  EXPECT_EQ(b["id"], "TCB0001");
  EXPECT_EQ(b["line"], 72);
  EXPECT_EQ(b["module_path"], "blocks.0.attn");
  EXPECT_EQ(b["stack"].size(), 3u);
  for (const char* key : {"id", "op_count", "ops"}) EXPECT_TRUE(j["graphs"][0].contains(key)) << key;
  for (const char* key : {"kind", "expr", "file", "line"}) EXPECT_TRUE(j["guards"][0].contains(key)) << key;
  // The same facts are in the database.
  RunReader reader(db);
  auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].command, "explain");
  EXPECT_EQ(runs[0].status, "finished");
  EXPECT_EQ(runs[0].model_sha256.size(), 64u);
  auto sites = analysis::break_sites(reader, runs[0].id);
  ASSERT_EQ(sites.size(), 2u);  // one per module path
  EXPECT_EQ(sites[0].line, 72);
  EXPECT_EQ(reader.counts(runs[0].id).graphs, 3);
}

TEST(ExplainCommand, TextShowsSourceLineAndHint) {
  TempDir dir;
  auto r = run_command(std::string(TCPROF_BIN) + " explain " + sample("data_dependent_branch") +
                       " --input 'f32[4,8]' --db " + dir.file("e.db"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("TCB0004 data_dependent_branch"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| if y.sum() > 0:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hint: use torch.where"), std::string::npos) << r.output;
}

TEST(RunCommand, JsonCountsMatchTheRecompileStory) {
  TempDir dir;
  std::string db = dir.file("run.db");
  auto r = run_command(std::string(TCPROF_BIN) + " run " + sample("gpt_tiny") +
                       " --input 'i64[2,16](0,512)' --vary 0:1=8..40 --iters 8 --verify --json --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  for (const char* key : {"calls", "compiles", "recompiles", "guard_failures", "graph_breaks", "cache_entries",
                          "eager_calls", "recompile_limit_hits", "ms_per_call", "db"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["calls"], 8);
  EXPECT_EQ(j["compiles"], 2);
  EXPECT_EQ(j["recompiles"], 1);
  EXPECT_EQ(j["graph_breaks"], 0);
  EXPECT_EQ(j["db"], db);
  RunReader reader(db);
  auto calls = reader.calls(reader.runs()[0].id);
  ASSERT_EQ(calls.size(), 8u);
  EXPECT_EQ(calls[0].path, "compiled");
  EXPECT_EQ(calls[0].input_shapes.rfind("[[2,", 0), 0u) << calls[0].input_shapes;
}

// Per-call time has one definition (docs/gpu.md): what `run` prints is what it recorded, and so
// what `report` (and the GUI) show for the run, in every profile mode.
TEST(RunCommand, PerCallTimeIsTheSameInRunAndReportInEveryProfileMode) {
  TempDir dir;
  for (const char* mode : {"off", "summary", "full"}) {
    const std::string db = dir.file(std::string(mode) + ".db");
    auto r = run_command(std::string(TCPROF_BIN) + " run " + sample("cnn") + " --input 'f32[2,3,16,16]' --iters 6 --profile " +
                         mode + " --json --db " + db);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto run = nlohmann::json::parse(r.output);
    EXPECT_EQ(run["timed_with"], "host clock") << mode;  // a CPU run; CUDA events on a GPU
    auto rep = run_command(std::string(TCPROF_BIN) + " report --json " + db);
    ASSERT_EQ(rep.exit_code, 0) << rep.output;
    auto report = nlohmann::json::parse(rep.output)["runs"][0]["summary"];
    ASSERT_TRUE(run["steady_median_ms_per_call"].is_number()) << r.output;
    EXPECT_DOUBLE_EQ(run["steady_median_ms_per_call"].get<double>(), report["steady_median_ms_per_call"].get<double>()) << mode;
    EXPECT_DOUBLE_EQ(run["mean_ms_per_call_incl_compile"].get<double>(), report["mean_ms_per_call_incl_compile"].get<double>())
        << mode;
  }
}

TEST(RunCommand, DefaultDatabaseGoesToTcprofRuns) {
  TempDir dir;
  auto r = run_command("cd " + dir.path().string() + " && " + TCPROF_BIN + " run " + sample("cnn") +
                       " --input 'f32[1,3,16,16]' --iters 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Recorded in tcprof-runs/cnn-"), std::string::npos) << r.output;
}

TEST(BenchCommand, JsonHasTheContractKeys) {
  TempDir dir;
  auto r = run_command(std::string(TCPROF_BIN) + " bench " + sample("gpt_tiny") +
                       " --input 'i64[2,16](0,512)' --iters 3 --warmup 1 --json --db " + dir.file("b.db"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  for (const char* key : {"eager_ms", "compiled_ms", "speedup", "baselines", "compile_s", "warm_compile_s", "threads"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_GT(j["eager_ms"].get<double>(), 0);
  // The warm start's time beyond the one eager forward its capture runs (that forward is the call's
  // own work; the rest is compiling from the cache).
  EXPECT_NEAR(j["warm_beyond_eager_s"].get<double>(),
              j["warm_compile_s"].get<double>() - j["eager_ms"].get<double>() / 1e3, 1e-9);
  EXPECT_TRUE(j["baselines"].contains("torchscript_optimized")) << r.output;
  EXPECT_EQ(j["threads"], 1);
  // The machine's load around the timings, and whether it was quiet enough to trust them.
  EXPECT_GE(j["load_average_before"].get<double>(), 0);
  EXPECT_EQ(j["timed_with"], "host clock");  // CUDA events only time calls on a GPU
  EXPECT_GE(j["load_average_after"].get<double>(), 0);
  EXPECT_EQ(j["quiet"].get<bool>(),
            j["load_average_before"].get<double>() < 0.5 && j["load_average_after"].get<double>() < 1.75);
}

TEST(BenchCommand, NoTorchscriptSkipsThatBaselineAndSaysSo) {
  auto r = run_command(std::string(TCPROF_BIN) + " bench " + sample("gpt_tiny") +
                       " --input 'i64[2,16](0,512)' --iters 2 --warmup 0 --no-torchscript --json --db none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_FALSE(j["baselines"].contains("torchscript_optimized")) << r.output;
  EXPECT_TRUE(j["baselines"].contains("eager"));
  EXPECT_EQ(j["torchscript_optimized_error"], "skipped (--no-torchscript)");
  auto text = run_command(std::string(TCPROF_BIN) + " bench " + sample("gpt_tiny") +
                          " --input 'i64[2,16](0,512)' --iters 2 --warmup 0 --no-torchscript --db none");
  EXPECT_NE(text.output.find("TorchScript optimised: skipped (--no-torchscript)"), std::string::npos)
      << text.output;
}

// What recording costs, measured in one process: each profile mode's calls, its rows, its scratch
// databases gone afterwards.
TEST(BenchCommand, RecordingCostTimesEveryProfileModeInOneProcess) {
  TempDir scratch;
  auto r = run_command("TMPDIR=" + scratch.path().string() + " " + TCPROF_BIN + " bench " + sample("gpt_tiny") +
                       " --input 'i64[2,16](0,512)' --recording-cost --iters 7 --block 3 --warmup 1 --json --db none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  const auto& modes = j["recording_cost"];
  ASSERT_EQ(modes.size(), 3u) << r.output;  // off, summary, full (CUPTI's split only on a GPU)
  std::vector<double> rows;
  for (size_t i = 0; i < modes.size(); ++i) {
    EXPECT_EQ(modes[i]["profile"], std::vector<std::string>({"off", "summary", "full"})[i]);
    EXPECT_EQ(modes[i]["calls"], 9) << "3 blocks of 3 calls";
    EXPECT_GT(modes[i]["ms_per_call"].get<double>(), 0);
    EXPECT_GT(modes[i]["mean_ms_per_call"].get<double>(), 0) << "a sampling summary's cost shows in the mean";
    EXPECT_FALSE(modes[i].contains("gpu_calls_recorded")) << "no CUPTI collector on the CPU";
    rows.push_back(modes[i]["rows_per_call"].get<double>());
  }
  EXPECT_EQ(modes[0]["percent_over_off"].get<double>(), 0);
  EXPECT_EQ(modes[0]["mean_percent_over_off"].get<double>(), 0);
  // Each mode really recorded as `run` does: off writes the call rows, summary adds one aggregate
  // per kernel and call, full a row per launch.
  EXPECT_LT(rows[0], rows[1]);
  EXPECT_LT(rows[1], rows[2]);
  EXPECT_EQ(j["timed_with"], "host clock");
  EXPECT_TRUE(std::filesystem::is_empty(scratch.path())) << "the scratch databases and kernel cache are removed";

  auto text = run_command(std::string(TCPROF_BIN) + " bench " + sample("gpt_tiny") +
                          " --input 'i64[2,16](0,512)' --recording-cost --iters 2 --warmup 0 --db none");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("--profile"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("mean ms"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("full"), std::string::npos) << text.output;
  EXPECT_EQ(run_command(std::string(TCPROF_BIN) + " bench " + sample("gpt_tiny_loss") +
                        " --input 'i64[2,16](0,512)' --train --loss model --recording-cost --db none 2>&1")
                .exit_code,
            2);
}

TEST(BreaksCommand, DocsFileIsTheRegistry) {
  auto r = run_command(std::string(TCPROF_BIN) + " breaks --markdown");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, testing::read_file(std::string(TCPROF_SOURCE_DIR) + "/docs/graph-breaks.md"))
      << "regenerate with: tcprof breaks --markdown > docs/graph-breaks.md";
  auto one = run_command(std::string(TCPROF_BIN) + " breaks TCB0004");
  EXPECT_NE(one.output.find("data_dependent_branch"), std::string::npos);
  EXPECT_EQ(run_command(std::string(TCPROF_BIN) + " breaks TCB9999 2>/dev/null").exit_code, 2);
}

TEST(Logs, TcprofLogsPrintsBreaksRecompilesAndGuards) {
  TempDir dir;
  auto r = run_command("TCPROF_LOGS=graph_breaks,recompiles,guards " + std::string(TCPROF_BIN) + " run " +
                           sample("shape_guarded_branch") + " --input 'f32[4,3]' --vary 0:1=3,5 --iters 4 --db " +
                           dir.file("l.db") + " 2>&1 >/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[tcprof:guards] guards for 0/0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x.size(1) == 3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[tcprof:recompiles] recompiling forward"), std::string::npos) << r.output;
  auto b = run_command("TCPROF_LOGS=graph_breaks " + std::string(TCPROF_BIN) + " run " + sample("print_in_forward") +
                       " --input 'f32[4,8]' --iters 1 --db " + dir.file("b.db") + " 2>&1 >/dev/null");
  EXPECT_NE(b.output.find("[tcprof:graph_breaks] graph break TCB0001 (side_effect)"), std::string::npos) << b.output;
}

}  // namespace
}  // namespace tcprof
