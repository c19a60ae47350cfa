// Real PyTorch 2.6 logs (Debian 13, CPU, Inductor; tests/fixtures/torch_trace/make_traces_torch26.py)
// give exactly the counts written in tests/fixtures/torch_trace/README.md, derived there with
// count_trace.py and grep, not with this importer: two gloo ranks that compile differently, a
// torch._dynamo.reset() between two sessions, a job killed with kill -9 while Inductor compiled,
// and a CPU-only Kineto trace. 2.6 logs no pytorch_version and prints recompile reasons as a JSON
// list naming tensors as L['x'].
#include <gtest/gtest.h>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "analysis/break_sites.h"
#include "analysis/rank_divergence.h"
#include "analysis/recompiles.h"
#include "importers/guard_text.h"
#include "importers/trace_import.h"
#include "core/run_reader.h"
#include "core/sqlite_db.h"
#include "tests/test_support.h"

namespace tcprof::import {
namespace {

const std::string kFixtures = TCPROF_TRACE_FIXTURES;
const std::string kBin = TCPROF_BIN;
const std::string kScript = "/root/fixtures/make_traces_torch26.py";

int64_t count(const std::string& db, const std::string& sql) {
  Database d(db, Database::Mode::ReadOnly);
  auto st = d.prepare(sql);
  st.step();
  return st.int64(0);
}

std::set<std::string> labels(const std::vector<CompileRow>& compiles) {
  std::set<std::string> out;
  for (const auto& c : compiles) out.insert(c.compile_label);
  return out;
}

// Every recompile's failures name the failed entry's TENSOR_MATCH guard on the tensor whose size
// changed (2.6 prints it as "tensor 'L['x']' size mismatch ...").
void expect_size_failures(const RunReader& reader, Id run_id, const std::map<std::string, std::string>& tensor_by_label) {
  auto recompiles = analysis::recompiles_with_failures(reader, run_id);
  ASSERT_EQ(recompiles.size(), tensor_by_label.size());
  for (const auto& rc : recompiles) {
    SCOPED_TRACE(rc.compile_label);
    ASSERT_EQ(tensor_by_label.count(rc.compile_label), 1u);
    const std::string& tensor = tensor_by_label.at(rc.compile_label);
    EXPECT_EQ(rc.reason, "tensor 'L['" + tensor + "']' size mismatch at index 0. expected 4, actual 8");
    ASSERT_EQ(rc.failures.size(), 1u);
    EXPECT_EQ(rc.failures[0].expected, "4");
    EXPECT_EQ(rc.failures[0].actual, "8");
    EXPECT_EQ(rc.failures[0].guard_kind, "tensor_match");
    EXPECT_EQ(rc.failures[0].guard_expr.rfind("check_tensor(L['" + tensor + "'], ", 0), 0u) << rc.failures[0].guard_expr;
  }
}

TEST(ImportTorch26, RecompileReasonNamesTheTensorAsAFrameLocal) {
  auto r = parse_recompile_reasons("[\n\"0/0: tensor 'L['x']' size mismatch at index 0. expected 4, actual 8\"\n]");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].compile_label, "0/0");
  EXPECT_EQ(r[0].message, "tensor 'L['x']' size mismatch at index 0. expected 4, actual 8");
  EXPECT_EQ(r[0].expected, "4");
  EXPECT_EQ(r[0].actual, "8");
}

// Two gloo ranks: rank 0 compiles 0/0 once; rank 1 breaks at line 32 (print) and recompiles both
// frames on its third call (8 rows).
TEST(ImportTorch26, TwoRanksThatDiverge) {
  testing::TempDir dir;
  ImportResult r = import_traces({{kFixtures + "/ranks_torch2.6_cpu"}, {}, dir.file("r.db")});
  ASSERT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  ASSERT_EQ(r.runs.size(), 2u);
  const ImportedRun &r0 = r.runs[0], &r1 = r.runs[1];
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r1.rank, 1);
  for (const auto* run : {&r0, &r1}) {
    EXPECT_EQ(run->world_size, 2);
    EXPECT_EQ(run->pytorch_version, "");  // 2.6's compilation_metrics has no pytorch_version
    EXPECT_EQ(run->compiles_incomplete, 0);
    EXPECT_EQ(run->damaged_records, 0);
    EXPECT_EQ(run->unknown_records, 0);
    EXPECT_EQ(run->kernels, 0);
  }
  EXPECT_EQ(r0.frames, 1);
  EXPECT_EQ(r0.compiles, 1);
  EXPECT_EQ(r0.graph_breaks, 0);
  EXPECT_EQ(r0.recompiles, 0);
  EXPECT_EQ(r0.guard_failures, 0);
  EXPECT_EQ(r1.frames, 2);
  EXPECT_EQ(r1.compiles, 4);
  EXPECT_EQ(r1.graph_breaks, 2);
  EXPECT_EQ(r1.recompiles, 2);
  EXPECT_EQ(r1.guard_failures, 2);

  RunReader reader(r.db);
  auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& run : runs) {
    EXPECT_EQ(run.source, "torch_trace");
    EXPECT_EQ(run.status, "finished");
    EXPECT_EQ(run.device, "cpu");
    EXPECT_EQ(run.world_size, 2);
  }
  // Each rank's first and last record (chromium events), not the time of the import.
  EXPECT_EQ(runs[0].started_at, "2026-11-24T19:25:23Z");
  EXPECT_EQ(runs[0].finished_at, "2026-11-24T19:25:29Z");
  EXPECT_EQ(runs[1].finished_at, "2026-11-24T19:25:37Z");
  EXPECT_EQ(labels(reader.compiles(r0.run_id)), (std::set<std::string>{"0/0"}));
  auto compiles1 = reader.compiles(r1.run_id);
  EXPECT_EQ(labels(compiles1), (std::set<std::string>{"0/0", "1/0", "0/1", "1/1"}));
  std::set<std::string> restarted;
  for (const auto& c : compiles1) {
    EXPECT_EQ(c.status, "ok") << c.compile_label;
    if (c.attempt > 0) restarted.insert(c.compile_label);
  }
  EXPECT_EQ(restarted, (std::set<std::string>{"0/0", "0/1"}));  // the frames that broke at print

  // 2 break records at 1 site: the print at line 32, a side effect (2.6 has no GB ids).
  auto sites = analysis::break_sites(reader, r1.run_id);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].file, kScript);
  EXPECT_EQ(sites[0].line, 32);
  EXPECT_EQ(sites[0].count, 2);
  EXPECT_EQ(sites[0].type, "side_effect");
  EXPECT_EQ(sites[0].break_id, "");

  auto frames = reader.frames(r1.run_id);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].name, "forward");
  EXPECT_EQ(frames[0].file, kScript);
  EXPECT_EQ(frames[0].line, 29);
  EXPECT_EQ(frames[1].name, "torch_dynamo_resume_in_forward_at_32");
  expect_size_failures(reader, r1.run_id, {{"0/1", "x"}, {"1/1", "y"}});

  // What differs between the ranks: 3 compile ids on rank 1 only, recompiles in both of rank 1's
  // frames, breaks in forward.
  auto div = analysis::rank_divergence(reader, r0.run_id);
  ASSERT_EQ(div.ranks.size(), 2u);
  // The per-rank table (report --json "ranks", the GUI's Ranks view) counts what each rank compiled.
  EXPECT_EQ(div.ranks[0].rank, 0);
  EXPECT_EQ(div.ranks[1].rank, 1);
  EXPECT_EQ(div.ranks[0].status, "finished");
  EXPECT_EQ(div.ranks[0].frames, 1);
  EXPECT_EQ(div.ranks[1].frames, 2);
  EXPECT_EQ(div.ranks[0].compiles, 1);
  EXPECT_EQ(div.ranks[1].compiles, 4);
  EXPECT_EQ(div.ranks[0].recompiles, 0);
  EXPECT_EQ(div.ranks[1].recompiles, 2);
  EXPECT_EQ(div.ranks[0].graph_breaks, 0);
  EXPECT_EQ(div.ranks[1].graph_breaks, 2);
  std::set<std::pair<std::string, std::string>> items;
  std::map<std::string, std::string> detail;
  for (const auto& item : div.items) {
    items.insert({item.kind, item.subject});
    detail[item.kind + " " + item.subject] = item.detail;
  }
  EXPECT_EQ(items, (std::set<std::pair<std::string, std::string>>{
                       {"compile_on_some_ranks", "1/0"},
                       {"compile_on_some_ranks", "0/1"},
                       {"compile_on_some_ranks", "1/1"},
                       {"recompiles_differ", "forward"},
                       {"recompiles_differ", "torch_dynamo_resume_in_forward_at_32"},
                       {"graph_breaks_differ", "forward"}}));
  EXPECT_EQ(detail["compile_on_some_ranks 0/1"], "on rank 1 only; missing on 0");
  EXPECT_EQ(detail["recompiles_differ forward"], "rank 0: 0, rank 1: 1");
  EXPECT_EQ(detail["graph_breaks_differ forward"], "rank 0: 0, rank 1: 2");
  // Seen from rank 1 it is the same comparison.
  EXPECT_EQ(analysis::rank_divergence(reader, r1.run_id).items.size(), 6u);
}

// 2.6 logs its graph breaks without registry ids ("Reason: Data-dependent jump", "Unsupported:
// Tensor.item", ...): each break's type comes from that text, never unsupported_op by default.
TEST(ImportTorch26, BreakTypesFromTheReasonText) {
  testing::TempDir dir;
  ImportResult r = import_traces({{kFixtures + "/breaks_torch2.6_cpu.log.gz"}, {}, dir.file("b.db")});
  ASSERT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].frames, 5);
  EXPECT_EQ(r.runs[0].compiles, 5);
  EXPECT_EQ(r.runs[0].graph_breaks, 4);
  RunReader reader(r.db);
  std::map<int, std::string> by_line;
  for (const auto& site : analysis::break_sites(reader, r.runs[0].run_id)) {
    EXPECT_EQ(site.file, kScript);
    EXPECT_EQ(site.break_id, "");
    EXPECT_EQ(site.count, 1);
    by_line[site.line] = site.type;
  }
  EXPECT_EQ(by_line, (std::map<int, std::string>{{110, "side_effect"},
                                                  {111, "data_dependent_branch"},
                                                  {113, "scalar_output"},
                                                  {114, "dynamic_output_shape"}}));
}

// torch._dynamo.reset() between two sessions: compile id 0/0 twice in one file, two runs.
TEST(ImportTorch26, ResetStartsANewRun) {
  testing::TempDir dir;
  ImportResult r = import_traces({{kFixtures + "/reset_torch2.6_cpu.log.gz"}, {}, dir.file("s.db")});
  ASSERT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  ASSERT_EQ(r.runs.size(), 2u);
  const ImportedRun &a = r.runs[0], &b = r.runs[1];
  EXPECT_NE(a.run_id, b.run_id);
  EXPECT_EQ(a.frames, 1);
  EXPECT_EQ(a.compiles, 2);
  EXPECT_EQ(a.recompiles, 1);
  EXPECT_EQ(a.guard_failures, 1);
  EXPECT_EQ(b.frames, 1);
  EXPECT_EQ(b.compiles, 1);
  EXPECT_EQ(b.recompiles, 0);
  EXPECT_EQ(b.guard_failures, 0);
  for (const auto* run : {&a, &b}) {
    EXPECT_EQ(run->compiles_incomplete, 0);
    EXPECT_EQ(run->graph_breaks, 0);
    EXPECT_EQ(run->rank, 0);
    EXPECT_EQ(run->world_size, 1);
  }

  RunReader reader(r.db);
  for (const auto& run : reader.runs()) EXPECT_EQ(run.status, "finished");
  auto first = reader.compiles(a.run_id), second = reader.compiles(b.run_id);
  EXPECT_EQ(labels(first), (std::set<std::string>{"0/0", "0/1"}));
  EXPECT_EQ(labels(second), (std::set<std::string>{"0/0"}));
  // The second session's 0/0 began after the first session's last compile: not merged into it.
  int64_t first_end = 0;
  for (const auto& c : first) first_end = std::max(first_end, c.start_ns + c.duration_ns);
  EXPECT_GT(second[0].start_ns, first_end);
  // Every chromium phase begun in a session ended in it.
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM compile_phases WHERE phase LIKE '% (unfinished)'"), 0);
  for (const auto& p : reader.compile_phases(b.run_id)) EXPECT_GE(p.start_ns, second[0].start_ns) << p.phase;
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM graphs WHERE kind='dynamo' AND run_id=" + std::to_string(a.run_id)), 2);
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM graphs WHERE kind='dynamo' AND run_id=" + std::to_string(b.run_id)), 1);
  expect_size_failures(reader, a.run_id, {{"0/1", "x"}});
}

// kill -9 while Inductor generated code for 0/1: 0/0 finished, 0/1 started and never closed, 10
// chromium phases of 0/1 begun and never ended. The log ends at a record boundary (each record is
// flushed), so nothing is damaged.
TEST(ImportTorch26, KilledMidCompileIsInterrupted) {
  testing::TempDir dir;
  ImportResult r = import_traces({{kFixtures + "/killed_torch2.6_cpu.log.gz"}, {}, dir.file("k.db")});
  ASSERT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  ASSERT_EQ(r.runs.size(), 1u);
  const ImportedRun& run = r.runs[0];
  EXPECT_EQ(run.frames, 1);
  EXPECT_EQ(run.compiles, 2);
  EXPECT_EQ(run.compiles_incomplete, 1);
  EXPECT_EQ(run.recompiles, 1);
  EXPECT_EQ(run.guard_failures, 1);
  EXPECT_EQ(run.graph_breaks, 0);
  EXPECT_EQ(run.damaged_records, 0);

  RunReader reader(r.db);
  auto row = reader.run(run.run_id);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->status, "interrupted");
  EXPECT_FALSE(row->status_inferred);  // said by the import, not guessed from a missing process
  // Stopped when its last record was written (chromium ts 1795548363105630.8 us), not when the
  // import ran.
  EXPECT_EQ(row->started_at, "2026-11-24T19:25:59Z");
  EXPECT_EQ(row->finished_at, "2026-11-24T19:26:03Z");
  EXPECT_EQ(row->last_event_at, "2026-11-24T19:26:03Z");
  std::map<std::string, std::string> status;
  Id killed = 0;
  for (const auto& c : reader.compiles(run.run_id)) {
    status[c.compile_label] = c.status;
    if (c.compile_label == "0/1") killed = c.id;
  }
  EXPECT_EQ(status, (std::map<std::string, std::string>{{"0/0", "ok"}, {"0/1", "incomplete"}}));
  std::set<std::string> unfinished;
  const std::string suffix = " (unfinished)";
  for (const auto& p : reader.compile_phases(run.run_id)) {
    if (p.phase.size() > suffix.size() && p.phase.compare(p.phase.size() - suffix.size(), suffix.size(), suffix) == 0) {
      EXPECT_EQ(p.compile_id, killed) << p.phase;
      unfinished.insert(p.phase.substr(0, p.phase.size() - suffix.size()));
    }
  }
  EXPECT_EQ(unfinished, (std::set<std::string>{"GraphLowering.codegen", "GraphLowering.compile_to_fn", "Scheduler.__init__",
                                               "backend_compile", "code_gen", "compile_fx.<locals>.fw_compiler_base",
                                               "create_aot_dispatcher_function", "dynamo", "entire_frame_compile",
                                               "inductor_compile"}));
  EXPECT_EQ(count(r.db, "SELECT count(*) FROM compile_phases WHERE phase LIKE '% (unfinished)'"), 10);
  expect_size_failures(reader, run.run_id, {{"0/1", "x"}});
}

// torch.profiler with ProfilerActivity.CPU around three forward+backward calls (4, 4, 8 rows):
// Torch-Compiled Region 0/0 twice, 0/1 once (recompiled inside the window); no GPU work.
TEST(ImportTorch26, CpuKinetoRegionsAreCalls) {
  testing::TempDir dir;
  ImportResult r = import_traces({{kFixtures + "/kineto_torch2.6_cpu.log.gz"},
                                  {kFixtures + "/kineto_trace_torch2.6_cpu.json.gz"},
                                  dir.file("p.db")});
  ASSERT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  ASSERT_EQ(r.runs.size(), 1u);
  const ImportedRun& run = r.runs[0];
  EXPECT_EQ(run.frames, 1);
  EXPECT_EQ(run.compiles, 2);
  EXPECT_EQ(run.recompiles, 1);
  EXPECT_EQ(run.guard_failures, 1);
  EXPECT_EQ(run.graph_breaks, 0);
  EXPECT_EQ(run.kernels, 0);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("0 kernels (0 autotuning, 0 in compiled graphs, 0 eager), 3 compiled-region calls"),
            std::string::npos)
      << r.notes[0];

  RunReader reader(r.db);
  auto calls = reader.calls(run.run_id);
  ASSERT_EQ(calls.size(), 3u);
  std::map<Id, std::string> label_of;
  std::map<std::string, const CompileRow*> compile_by_label;
  auto compiles = reader.compiles(run.run_id);
  for (const auto& c : compiles) {
    label_of[c.id] = c.compile_label;
    compile_by_label[c.compile_label] = &c;
  }
  std::map<std::string, int> per_label;
  for (const auto& c : calls) {
    ++per_label[label_of[c.compile_id]];
    EXPECT_NE(c.frame_id, 0);
    EXPECT_GT(c.duration_ns, 0);
    // Kineto's clock is TORCH_TRACE's: a call runs after the compile that made it finished.
    const CompileRow* made = compile_by_label.at(label_of[c.compile_id]);
    EXPECT_GT(c.start_ns, made->start_ns + made->duration_ns) << made->compile_label;
  }
  EXPECT_EQ(per_label, (std::map<std::string, int>{{"0/0", 2}, {"0/1", 1}}));
  expect_size_failures(reader, run.run_id, {{"0/1", "x"}});
}

// The command line on the two-rank folder: one run per rank, and report shows where they diverge.
TEST(ImportTorch26, CommandLineRanksAndReport) {
  testing::TempDir dir;
  std::string db = dir.file("r.db");
  auto imp = tcprof::testing::run_command(kBin + " import " + kFixtures + "/ranks_torch2.6_cpu --db " + db + " --json");
  ASSERT_EQ(imp.exit_code, 0) << imp.output;
  auto j = nlohmann::json::parse(imp.output);
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["rank"], 0);
  EXPECT_EQ(j["runs"][1]["rank"], 1);
  EXPECT_EQ(j["runs"][1]["compiles"], 4);
  EXPECT_EQ(j["runs"][1]["break_sites"], 1);
  EXPECT_EQ(j["runs"][1]["recompiles"], 2);
  auto report = tcprof::testing::run_command(kBin + " report " + db, true);
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("Ranks diverge"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("compile 0/1: on rank 1 only; missing on 0"), std::string::npos) << report.output;
  // report --json: the divergence and each rank's counts beside it.
  auto json = tcprof::testing::run_command(kBin + " report " + db + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  auto run = nlohmann::json::parse(json.output)["runs"][0];
  EXPECT_EQ(run["rank_divergence"].size(), 6u);
  ASSERT_EQ(run["ranks"].size(), 2u);
  EXPECT_EQ(run["ranks"][1]["rank"], 1);
  EXPECT_EQ(run["ranks"][1]["compiles"], 4);
  EXPECT_EQ(run["ranks"][1]["graph_breaks"], 2);
  EXPECT_EQ(run["ranks"][0]["recompiles"], 0);
}

}  // namespace
}  // namespace tcprof::import
