// The real PyTorch 2.11 logs give exactly the counts written in tests/fixtures/torch_trace/README.md
// (derived there with a separate parser and grep, not with this importer).
#include <gtest/gtest.h>

#include <map>

#include "analysis/break_sites.h"
#include "analysis/recompiles.h"
#include "importers/trace_import.h"
#include "core/run_reader.h"
#include "core/sqlite_db.h"
#include "tests/test_support.h"

namespace tcprof::import {
namespace {

const std::string kFixtures = TCPROF_TRACE_FIXTURES;

int64_t count(const std::string& db, const std::string& sql) {
  Database d(db, Database::Mode::ReadOnly);
  auto st = d.prepare(sql);
  st.step();
  return st.int64(0);
}

TEST(ImportCounts, BreaksFixture) {
  testing::TempDir dir;
  ImportResult r = import_traces({{kFixtures + "/breaks_torch2.11_h100.log.gz"}, {}, dir.file("x.db")});
  ASSERT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  ASSERT_EQ(r.runs.size(), 1u);
  const ImportedRun& run = r.runs[0];
  EXPECT_EQ(run.pytorch_version, "2.11.0+cu130");
  EXPECT_EQ(run.frames, 5);
  EXPECT_EQ(run.compiles, 15);
  EXPECT_EQ(run.compiles_incomplete, 0);
  EXPECT_EQ(run.graph_breaks, 13);
  EXPECT_EQ(run.recompiles, 10);
  EXPECT_EQ(run.guard_failures, 21);  // 21 reason lines in 10 recompile_reasons artifacts
  EXPECT_EQ(run.damaged_records, 0);
  EXPECT_EQ(run.unknown_records, 0);

  RunReader reader(r.db);
  auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].source, "torch_trace");
  EXPECT_EQ(runs[0].device, "cuda:0");
  EXPECT_EQ(runs[0].libtorch_version, "2.11.0+cu130");
  EXPECT_NE(runs[0].config_json.find("recompile_limit"), std::string::npos);

  // 15 compiles, all finished; 11 of them restarted after a break.
  auto compiles = reader.compiles(run.run_id);
  ASSERT_EQ(compiles.size(), 15u);
  int restarted = 0;
  std::set<std::string> labels;
  for (const auto& c : compiles) {
    EXPECT_EQ(c.status, "ok") << c.compile_label;
    restarted += c.attempt > 0;
    labels.insert(c.compile_label);
  }
  EXPECT_EQ(restarted, 11);
  EXPECT_EQ(labels, (std::set<std::string>{"0/0", "1/0", "2/0", "3/0", "4/0", "0/1", "1/1", "2/1", "3/1", "4/1",
                                           "2/2", "3/2", "3/3", "3/4", "3/5"}));

  // 13 break artifacts at 4 sites: line 31 x2, 32 x2, 34 x3, 36 x6, each with its type and GB id.
  auto sites = analysis::break_sites(reader, run.run_id);
  ASSERT_EQ(sites.size(), 4u);
  std::map<int, std::tuple<int64_t, std::string, std::string>> by_line;
  for (const auto& s : sites) by_line[s.line] = {s.count, s.type, s.break_id};
  EXPECT_EQ(by_line[31], std::make_tuple(int64_t{2}, std::string("side_effect"), std::string("GB0059")));
  EXPECT_EQ(by_line[32], std::make_tuple(int64_t{2}, std::string("data_dependent_branch"), std::string("GB0170")));
  EXPECT_EQ(by_line[34], std::make_tuple(int64_t{3}, std::string("scalar_output"), std::string("GB0124")));
  EXPECT_EQ(by_line[36], std::make_tuple(int64_t{6}, std::string("dynamic_output_shape"), std::string("GB0036")));
  for (const auto& s : sites) {
    EXPECT_EQ(s.file, "/home/user/project/make_traces.py");
    EXPECT_FALSE(s.source.empty());
  }

  // Recompiles per frame 0-4: 1, 1, 2, 5, 1; each with its guard failures.
  std::map<std::string, int> per_frame;
  auto frames = reader.frames(run.run_id);
  std::map<Id, std::string> frame_name;
  for (const auto& f : frames) frame_name[f.id] = f.name;
  for (const auto& c : compiles) {
    if (c.compile_label.substr(c.compile_label.find('/') + 1) != "0") ++per_frame[c.compile_label.substr(0, c.compile_label.find('/'))];
  }
  EXPECT_EQ(per_frame, (std::map<std::string, int>{{"0", 1}, {"1", 1}, {"2", 2}, {"3", 5}, {"4", 1}}));
  auto recompiles = analysis::recompiles_with_failures(reader, run.run_id);
  ASSERT_EQ(recompiles.size(), 10u);
  size_t failures = 0;
  for (const auto& rc : recompiles) failures += rc.failures.size();
  EXPECT_EQ(failures, 21u);
  const auto& first = recompiles.front();
  EXPECT_EQ(first.compile_label, "0/1");
  ASSERT_EQ(first.failures.size(), 1u);
  EXPECT_EQ(first.failures[0].expected, "4");
  EXPECT_EQ(first.failures[0].actual, "8");
  EXPECT_EQ(first.failures[0].guard_kind, "tensor_match");  // the failed entry's guard on x
  EXPECT_NE(first.failures[0].guard_expr.find("check_tensor(L['x']"), std::string::npos);

  // Frames: the compiled function and its resume functions, at their user lines.
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(frames[0].name, "forward");
  EXPECT_EQ(frames[0].line, 29);

  // Guards with user lines, graphs of every stage, phases, perf hints.
  EXPECT_GT(count(r.db, "SELECT count(*) FROM guards WHERE kind='tensor_match'"), 0);
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM graphs WHERE kind='dynamo'"), 20);
  EXPECT_GT(count(r.db, "SELECT count(*) FROM graphs WHERE kind='inductor_post_grad' AND fx_key IS NOT NULL AND code != ''"), 0);
  EXPECT_GT(count(r.db, "SELECT count(*) FROM compile_phases WHERE phase='dynamo'"), 0);
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM perf_hints WHERE kind='shape_specialization'"), 5);
}

TEST(ImportCounts, MlpWithKineto) {
  testing::TempDir dir;
  ImportResult r = import_traces({{kFixtures + "/mlp_torch2.11_h100.log.gz"},
                                  {kFixtures + "/mlp_kineto_torch2.11_h100.json.gz"},
                                  dir.file("m.db")});
  ASSERT_TRUE(r.errors.empty()) << r.errors.front();
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].frames, 1);
  EXPECT_EQ(r.runs[0].compiles, 2);
  EXPECT_EQ(r.runs[0].recompiles, 1);
  EXPECT_EQ(r.runs[0].graph_breaks, 0);
  EXPECT_EQ(r.runs[0].kernels, 685);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("685 kernels (624 autotuning, 40 in compiled graphs, 21 eager), 3 compiled-region calls, "
                            "4 FX graphs matched"),
            std::string::npos)
      << r.notes[0];
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM kernels WHERE kind='autotune'"), 624);
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM kernels WHERE kind IN ('generated','extern')"), 40);
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM kernels WHERE kind='eager'"), 21);
  // Autotuning is compile work: no graph, no call.
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM kernels WHERE kind='autotune' AND (graph_id != 0 OR call_id != 0)"), 0);
  // Each compiled-region span is a call of its cache entry: 0/0 once, 0/1 twice.
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM calls k JOIN compiles c ON c.id=k.compile_id WHERE c.compile_id='0/0'"), 1);
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM calls k JOIN compiles c ON c.id=k.compile_id WHERE c.compile_id='0/1'"), 2);
  // The 4 FX graph cache keys of the log are the 4 graphs the profiler's annotations name.
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM graphs WHERE fx_key IS NOT NULL AND fx_key != ''"), 4);
  EXPECT_EQ(count(r.db, "SELECT count(DISTINCT g.fx_key) FROM kernels k JOIN graphs g ON g.id=k.graph_id"), 4);
  // Kineto's clock is TORCH_TRACE's: the calls fall after the compiles that made them began.
  EXPECT_GT(count(r.db, "SELECT min(start_ns) FROM calls"), count(r.db, "SELECT min(start_ns) FROM compiles"));
}

}  // namespace
}  // namespace tcprof::import
