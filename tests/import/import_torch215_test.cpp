// Real PyTorch 2.15 logs (PyPI's torch 2.15.0, CPU, Inductor's C++ backend; made by
// tests/fixtures/torch_trace/gen_torch215.sh) give exactly the counts written in
// tests/fixtures/torch_trace/README.md, derived there with count_trace.py, not with this importer:
// graph breaks of every kind (one of them without a registry link), recompiles on sizes and on a
// float, dynamic=True, mark_dynamic, torch._dynamo.reset(), a job killed mid-compile, two gloo
// ranks that diverge, regional compilation of repeated blocks, and a second process that hits
// the FX-graph cache. 2.15 writes a lone recompile reason as bare text although its artifact says
// "encoding": "json".
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/break_sites.h"
#include "analysis/compile_time.h"
#include "analysis/recompiles.h"
#include "core/run_reader.h"
#include "core/sqlite_db.h"
#include "importers/trace_import.h"
#include "tests/test_support.h"

namespace tcprof::import {
namespace {

using tcprof::testing::query_db;
using tcprof::testing::TempDir;

const std::string kFixtures = std::string(TCPROF_TRACE_FIXTURES) + "/torch2.15_cpu/";
const std::string kScript = "/tmp/fx215/make_traces_torch215.py";

ImportResult import_mode(const std::string& mode, const TempDir& dir) {
  ImportResult r = import_traces({{kFixtures + mode}, {}, dir.file(mode + ".db")});
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();  // every record kind and artifact is known
  for (const auto& run : r.runs) {
    EXPECT_EQ(run.pytorch_version, "2.15.0+cu132");
    EXPECT_EQ(run.damaged_records, 0);
    EXPECT_EQ(run.unknown_records, 0);
  }
  return r;
}

int64_t restarts(const std::string& db, Id run_id) {
  return std::stoll(query_db(db, "SELECT count(*) FROM compiles WHERE attempt > 0 AND run_id = " + std::to_string(run_id)));
}

TEST(ImportTorch215, BreaksOfEveryKindAndRecompilesOnSizesAndAFloat) {
  TempDir dir;
  ImportResult r = import_mode("breaks", dir);
  ASSERT_EQ(r.runs.size(), 1u);
  const ImportedRun& run = r.runs[0];
  EXPECT_EQ(run.frames, 6);
  EXPECT_EQ(run.compiles, 15);
  EXPECT_EQ(run.compiles_incomplete, 0);
  EXPECT_EQ(restarts(r.db, run.run_id), 11);
  EXPECT_EQ(run.graph_breaks, 13);
  EXPECT_EQ(run.recompiles, 9);
  EXPECT_EQ(run.guard_failures, 13);
  EXPECT_EQ(query_db(r.db, "SELECT count(*) FROM graphs WHERE kind='dynamo'"), "16\n");

  // Five sites, each with its type; the data-dependent branch's type comes from its text.
  RunReader reader(r.db);
  std::map<int, std::string> by_line;
  for (const auto& site : analysis::break_sites(reader, run.run_id)) {
    EXPECT_EQ(site.file, kScript);
    by_line[site.line] = site.type + " " + site.break_id + " x" + std::to_string(site.count);
  }
  EXPECT_EQ(by_line, (std::map<int, std::string>{{40, "side_effect GB0059 x2"},
                                                  {41, "data_dependent_branch GB0170 x2"},
                                                  {43, "scalar_output GB0124 x3"},
                                                  {45, "dynamic_output_shape GB0036 x4"},
                                                  {46, "unsupported_op GB0025 x2"}}));

  // Bare-text reasons ("0/0: tensor 'x' size mismatch ...") and lists alike: every failure found
  // its guard in the failed entry; the float recompiles name the value the entry was made for.
  EXPECT_EQ(query_db(r.db, "SELECT count(*) FROM guard_failures WHERE guard_id = 0"), "0\n");
  auto recompiles = analysis::recompiles_with_failures(reader, run.run_id);
  std::map<std::string, size_t> failures;
  for (const auto& rc : recompiles) failures[rc.compile_label] = rc.failures.size();
  EXPECT_EQ(failures, (std::map<std::string, size_t>{{"0/1", 1}, {"1/1", 1}, {"2/1", 1}, {"2/2", 2}, {"3/1", 1},
                                                      {"3/2", 2}, {"3/3", 3}, {"4/1", 1}, {"5/1", 1}}));
  for (const auto& rc : recompiles) {
    if (rc.compile_label != "0/1") continue;
    EXPECT_EQ(rc.reason, "tensor 'x' size mismatch at index 0. expected 4, actual 8");
    EXPECT_EQ(rc.failures[0].expected, "4");
    EXPECT_EQ(rc.failures[0].actual, "8");
  }
  EXPECT_EQ(query_db(r.db, "SELECT expected FROM guard_failures WHERE message LIKE 'scale ==%'"), "1.0\n");
}

TEST(ImportTorch215, DynamicAndMarkDynamicCompileOnceForThreeSizes) {
  for (const char* mode : {"dynamic", "mark_dynamic"}) {
    SCOPED_TRACE(mode);
    TempDir dir;
    ImportResult r = import_mode(mode, dir);
    ASSERT_EQ(r.runs.size(), 1u);
    EXPECT_EQ(r.runs[0].compiles, 1);
    EXPECT_EQ(r.runs[0].recompiles, 0);
    EXPECT_EQ(r.runs[0].graph_breaks, 0);
    EXPECT_EQ(query_db(r.db, "SELECT count(DISTINCT fx_key) FROM graphs WHERE fx_key IS NOT NULL"), "2\n");
  }
}

TEST(ImportTorch215, ResetStartsANewRun) {
  TempDir dir;
  ImportResult r = import_mode("reset", dir);
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].compiles, 2);
  EXPECT_EQ(r.runs[0].recompiles, 1);
  EXPECT_EQ(r.runs[0].guard_failures, 1);
  EXPECT_EQ(r.runs[1].compiles, 1);
  EXPECT_EQ(r.runs[1].recompiles, 0);
  EXPECT_EQ(query_db(r.db, "SELECT status FROM runs ORDER BY id"), "finished\nfinished\n");
}

TEST(ImportTorch215, KilledMidCompileIsInterrupted) {
  TempDir dir;
  ImportResult r = import_mode("killed", dir);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].compiles, 2);
  EXPECT_EQ(r.runs[0].compiles_incomplete, 1);
  EXPECT_EQ(r.runs[0].recompiles, 1);
  EXPECT_EQ(query_db(r.db, "SELECT status FROM runs"), "interrupted\n");
  EXPECT_EQ(query_db(r.db, "SELECT compile_id FROM compiles WHERE status='incomplete'"), "0/1\n");
  EXPECT_EQ(query_db(r.db, "SELECT count(*) FROM compile_phases WHERE phase LIKE '% (unfinished)'"), "12\n");
}

TEST(ImportTorch215, TwoRanksThatDiverge) {
  TempDir dir;
  ImportResult r = import_mode("ranks", dir);
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].rank, 0);
  EXPECT_EQ(r.runs[0].world_size, 2);
  EXPECT_EQ(r.runs[0].compiles, 1);
  EXPECT_EQ(r.runs[0].graph_breaks, 0);
  EXPECT_EQ(r.runs[1].rank, 1);
  EXPECT_EQ(r.runs[1].frames, 2);
  EXPECT_EQ(r.runs[1].compiles, 4);
  EXPECT_EQ(restarts(r.db, r.runs[1].run_id), 2);
  EXPECT_EQ(r.runs[1].graph_breaks, 2);
  EXPECT_EQ(r.runs[1].recompiles, 2);
  EXPECT_EQ(query_db(r.db, "SELECT DISTINCT line, type FROM graph_breaks"), "60|side_effect\n");
}

TEST(ImportTorch215, RegionalCompilationOfSixBlocksCompilesTwice) {
  // Six identical blocks compiled one by one share one code object: block 0's input does not
  // require grad, the others' do, so Dynamo compiles twice (0/0, 0/1) and reuses 0/1 four times;
  // after reset() the whole stack is one graph.
  TempDir dir;
  ImportResult r = import_mode("regional", dir);
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].compiles, 2);
  EXPECT_EQ(r.runs[0].recompiles, 1);
  EXPECT_EQ(query_db(r.db, "SELECT reason FROM recompiles"), "tensor 'x' requires_grad mismatch. expected requires_grad=0\n");
  EXPECT_EQ(r.runs[1].compiles, 1);
}

TEST(ImportTorch215, ASecondProcessHitsTheFxGraphCache) {
  TempDir dir;
  ImportResult cold = import_mode("cache-cold", dir);
  ImportResult warm = import_mode("cache-warm", dir);
  ASSERT_EQ(cold.runs.size(), 1u);
  ASSERT_EQ(warm.runs.size(), 1u);
  // The same graph, by the same FX cache key, in both processes.
  EXPECT_EQ(query_db(cold.db, "SELECT fx_key FROM graphs WHERE fx_key IS NOT NULL"),
            query_db(warm.db, "SELECT fx_key FROM graphs WHERE fx_key IS NOT NULL"));
  auto inductor_ms = [](const std::string& db) {
    return std::stoll(query_db(db, "SELECT duration_ns / 1000000 FROM compile_phases WHERE phase='inductor_compile'"));
  };
  // The hit skips Inductor's code generation: 16.5 s cold, 0.3 s warm in these logs.
  EXPECT_GT(inductor_ms(cold.db), 10 * inductor_ms(warm.db));

  // Compile time by stage: the C++ compile is most of the cold compile and gone from the warm one.
  auto report = [](const std::string& db) {
    RunReader reader(db);
    return analysis::compile_time(reader, reader.runs().front().id);
  };
  const analysis::CompileTimeReport c = report(cold.db), w = report(warm.db);
  auto code = [](const analysis::CompileTimeReport& t) {
    return t.stage_ns[static_cast<int>(analysis::CompileStage::CodeCompile)];
  };
  EXPECT_GT(code(c), c.total_ns / 2);
  EXPECT_GT(code(c), 10 * code(w));
  EXPECT_EQ(c.cache.fx_misses, 1);
  EXPECT_EQ(c.cache.fx_hits, 0);
  EXPECT_EQ(w.cache.fx_hits, 1);
  EXPECT_EQ(w.cache.fx_misses, 0);
  EXPECT_EQ(c.cache.aot_misses, 1);
  for (const auto* t : {&c, &w}) {
    int64_t sum = 0;
    for (int64_t ns : t->stage_ns) sum += ns;
    EXPECT_EQ(sum, t->total_ns);
  }
}

// `tcprof diff` of the cold and the warm process: compile time by stage and the cache lookups.
TEST(ImportTorch215, DiffShowsWhatTheWarmCacheSaved) {
  TempDir dir;
  ImportResult cold = import_mode("cache-cold", dir);
  ImportResult warm = import_mode("cache-warm", dir);
  auto r = testing::run_command(std::string(TCPROF_BIN) + " diff " + cold.db + " " + warm.db + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output)["compile_time"];
  std::map<std::string, int64_t> delta;
  int64_t a_sum = 0;
  for (const auto& st : j["stages"]) {
    delta[st["stage"]] = st["delta_ns"].get<int64_t>();
    a_sum += st["a_ns"].get<int64_t>();
  }
  EXPECT_EQ(delta.size(), 6u);
  EXPECT_LT(delta["code_compile"], -10'000'000'000);  // the C++ compile of the cold process, 14 s
  EXPECT_LT(delta["inductor"], 0);
  // The stages add up to the compile time the summary row shows.
  EXPECT_NEAR(static_cast<double>(a_sum), nlohmann::json::parse(r.output)["a"]["compile_time_ms"].get<double>() * 1e6, 1.0);
  EXPECT_EQ(j["cache_a"]["fx_misses"], 1);
  EXPECT_EQ(j["cache_b"]["fx_hits"], 1);
  auto text = testing::run_command(std::string(TCPROF_BIN) + " diff " + cold.db + " " + warm.db);
  EXPECT_NE(text.output.find("FX cache hits                 0            1           +1"), std::string::npos) << text.output;
}

TEST(ImportTorch215, RepeatedGraphsAreFoundWithWhatTheirRepeatsCost) {
  TempDir dir;
  ImportResult r = import_mode("regional", dir);
  RunReader reader(r.db);
  analysis::CompileTimeReport t = analysis::compile_time(reader, r.runs[0].run_id);
  ASSERT_EQ(t.repeated.size(), 1u);  // blocks 0 and 1 compiled one graph (requires_grad differed)
  EXPECT_EQ(t.repeated[0].compile_labels, (std::vector<std::string>{"0/0", "0/1"}));
  EXPECT_EQ(t.repeated[0].avoidable_ns, t.compiles[1].total_ns);
  EXPECT_TRUE(t.blocks.empty());  // each compile holds one block
  // After reset(), the six blocks compiled whole are six copies inside one graph: compiled
  // regionally, five of them would not be compiled again.
  analysis::CompileTimeReport whole = analysis::compile_time(reader, r.runs[1].run_id);
  ASSERT_EQ(whole.blocks.size(), 1u);
  const analysis::RepeatedBlocks& blocks = whole.blocks[0];
  EXPECT_EQ(blocks.repeat.name, "modules 0-5");
  EXPECT_EQ(blocks.repeat.copies, 6);
  EXPECT_EQ(blocks.repeat.ops_per_copy, 5);  // layer norm, linear, gelu, linear, add
  EXPECT_EQ(blocks.repeat.covered_ops(), blocks.repeat.graph_ops);
  EXPECT_EQ(blocks.compile_label, "0/0");
  EXPECT_EQ(blocks.after_dynamo_ns,
            whole.total_ns - whole.stage_ns[static_cast<int>(analysis::CompileStage::Dynamo)]);
  EXPECT_NEAR(static_cast<double>(blocks.saving_ns), blocks.after_dynamo_ns * 5.0 / 6.0, 1e3);
  EXPECT_NE(analysis::advice(blocks).find("modules 0-5 are 6 copies of one 5-op block"), std::string::npos);
  // The float recompiles of the breaks fixture (3/1, 3/2, 3/3) produce one graph three times.
  ImportResult b = import_mode("breaks", dir);
  RunReader breaks(b.db);
  analysis::CompileTimeReport bt = analysis::compile_time(breaks, b.runs[0].run_id);
  ASSERT_FALSE(bt.repeated.empty());
  EXPECT_EQ(bt.repeated[0].compile_labels, (std::vector<std::string>{"3/1", "3/2", "3/3"}));
  EXPECT_EQ(bt.cache.fx_hits, 4);
}

}  // namespace
}  // namespace tcprof::import

namespace tcprof::import {
namespace {

// `check --max-compile-seconds`: a compile-time budget per frame, on a log imported on the fly.
// The breaks fixture's `forward` compiled for 20.7 s (two compiles, the first with a cold C++
// toolchain); every other frame took under 6 s.
TEST(ImportTorch215, CheckGatesCompileTimePerFrame) {
  const std::string bin = TCPROF_BIN;
  auto over = testing::run_command(bin + " check " + kFixtures + "breaks --max-compile-seconds 10 --format json");
  EXPECT_EQ(over.exit_code, 1) << over.output;
  auto j = nlohmann::json::parse(over.output);
  int budget_findings = 0;
  for (const auto& f : j["findings"]) {
    if (f["kind"] != "max_compile_time") continue;
    ++budget_findings;
    EXPECT_EQ(f["frame"], "forward");
    EXPECT_EQ(f["baseline"], 10000);
    EXPECT_EQ(f["unit"], "ms");
    EXPECT_GT(f["current"].get<int64_t>(), 20000);
  }
  EXPECT_EQ(budget_findings, 1);
  auto within = testing::run_command(bin + " check " + kFixtures + "breaks --max-compile-seconds 30");
  EXPECT_EQ(within.exit_code, 0) << within.output;
  auto bad = testing::run_command(bin + " check " + kFixtures + "breaks --max-compile-seconds -1", true);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
}

}  // namespace
}  // namespace tcprof::import
