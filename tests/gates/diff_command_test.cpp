// `tcprof diff` on two deterministic runs: the synthetic run (A) and a hand-made run (B) that
// moves one break a line down (same site), adds a print, recompiles more and changes kernel times.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/run_writer.h"
#include "samples/synthetic_run.h"
#include "tests/gates/gates_support.h"

namespace tcprof {
namespace {

using testing::replace_all;
using testing::TempDir;
using testing::tcprof;

// `gpu_calls_recorded` > 0: B's counters say a sampling summary recorded GPU work on that many of
// its 10 calls.
void write_run_b(const std::string& path, int64_t gpu_calls_recorded = 0) {
  RunInfo info;
  info.command = "synthetic";
  info.model_path = "samples/gpt_synthetic.pt";
  info.libtorch_version = "1.13.0";
  info.started_at = "2026-11-22T01:00:00Z";
  RunWriter w(path, info);
  int64_t t = 2'000'000'000;
  FrameEvent frame{w.next_id(), "forward", "", "model.py", 40};
  w.record(frame);
  GuardEvent size_guard{0, 0, "size", "x.size(1) == 64", "model.py", 41};
  Id first_compile = 0;
  auto compile = [&](const std::string& label, const std::string& reason, int64_t ns) {
    CompileEvent c{w.next_id(), frame.id, label, reason, t, ns, "ok", false};
    w.record(c);
    t += ns;
    w.record(GraphBreakEvent{c.id, "data_dependent_branch", "TCB0004", "prim::If",
                             "if-statement condition depends on tensor data",
                             "use torch.where instead of a data-dependent if", "model.py", 58, 9,
                             "        if attn.sum() > 0:", "blocks.1.attn", "[]"});
    if (!first_compile) {
      first_compile = c.id;
      size_guard.id = w.next_id();
      size_guard.compile_id = c.id;
      w.record(size_guard);
      w.record(GraphBreakEvent{c.id, "side_effect", "TCB0001", "prim::Print", "print() is a side effect",
                               "remove print()", "model.py", 60, 9, "        print(x.shape)", "blocks.1", "[]"});
    }
    return c.id;
  };
  Id entry = compile("0/0", "first call", 90'000'000);
  Id g0 = w.next_id();
  w.record(GraphEvent{g0, entry, 40, "", ""});
  const uint32_t generated = w.intern("generated"), extern_kind = w.intern("extern"), cpu = w.intern("cpu");
  const uint32_t mm = w.intern("mm"), gelu = w.intern("fused_gelu_add"), attn = w.intern("fused_attention");
  const int64_t sizes[] = {64, 96, 128, 160, 64, 96, 128, 160, 64, 96};
  for (int call = 0; call < 10; ++call) {
    Id call_id = w.next_id();
    if (call >= 1 && call <= 3) {
      std::string message = fmt::format("tensor 'x' size mismatch at index 1: expected 64, actual {}", sizes[call]);
      w.record(GuardFailureEvent{call_id, first_compile, size_guard.id, "64", std::to_string(sizes[call]), message});
      entry = compile(fmt::format("0/{}", call), message, 80'000'000);
      w.record(RecompileEvent{frame.id, call_id, entry, message, call});
    }
    int64_t start = t;
    for (int k = 0; k < 3; ++k) {
      KernelEvent e;
      e.call_id = call_id;
      e.graph_id = g0;
      e.name_id = k == 0 ? mm : (k == 1 ? gelu : attn);
      e.kind_id = k == 0 ? extern_kind : generated;
      e.device_id = cpu;
      e.start_ns = t;
      e.duration_ns = 30'000 + 20'000 * k;
      t += e.duration_ns + 1'000;
      w.record(e);
    }
    w.record(CallEvent{call_id, frame.id, entry, start, t - start, "compiled",
                       fmt::format("[[4,{},256]]", sizes[call])});
    t += 10'000;
  }
  if (gpu_calls_recorded > 0) {
    w.record(CounterEvent{"cupti.calls_recorded", gpu_calls_recorded});
    w.record(CounterEvent{"cupti.calls_skipped", 10 - gpu_calls_recorded});
  }
  w.close("finished");
}

TEST(DiffCommand, TextMatchesGolden) {
  TempDir dir;
  std::string a = dir.file("a.db"), b = dir.file("b.db");
  write_synthetic_run(a, SyntheticRunOptions{});
  write_run_b(b);
  auto r = tcprof("diff " + a + " " + b);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string actual = replace_all(replace_all(r.output, a, "<A>"), b, "<B>");
  std::string golden = std::string(TCPROF_GATES_GOLDEN_DIR) + "/diff_synthetic.txt";
  if (std::getenv("TCPROF_UPDATE_GOLDEN")) {
    std::ofstream(golden) << actual;
    GTEST_SKIP() << "updated " << golden;
  }
  EXPECT_EQ(actual, testing::read_file(golden)) << "to accept: TCPROF_UPDATE_GOLDEN=1 ctest -R DiffCommand";
  std::istringstream lines(actual);
  for (std::string line; std::getline(lines, line);) {
    size_t columns = 0;
    for (unsigned char c : line) columns += (c & 0xC0) != 0x80;
    EXPECT_LE(columns, 80u) << line;
  }
}

TEST(DiffCommand, JsonListsAddedRemovedAndDeltas) {
  TempDir dir;
  std::string a = dir.file("a.db"), b = dir.file("b.db");
  write_synthetic_run(a, SyntheticRunOptions{});
  write_run_b(b);
  auto r = tcprof("diff " + a + " " + b + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j["breaks_added"].size(), 1u);
  EXPECT_EQ(j["breaks_added"][0]["id"], "TCB0001");
  EXPECT_EQ(j["breaks_removed"].size(), 0u);  // line 57 -> 58 is the same site
  ASSERT_EQ(j["breaks_changed"].size(), 1u);
  EXPECT_EQ(j["breaks_changed"][0]["count_a"], 2);
  EXPECT_EQ(j["breaks_changed"][0]["count_b"], 4);
  EXPECT_EQ(j["a"]["recompiles"], 1);
  EXPECT_EQ(j["b"]["recompiles"], 3);
  EXPECT_EQ(j["frames"][0]["recompiles_b"], 3);
  // Largest change first.
  const auto& k = j["kernels"];
  ASSERT_GE(k.size(), 2u);
  EXPECT_GE(std::llabs(k[0]["delta_ns"].get<int64_t>()), std::llabs(k[1]["delta_ns"].get<int64_t>()));
  auto same = tcprof("diff " + a + " " + a + " --json");
  auto js = nlohmann::json::parse(same.output);
  EXPECT_EQ(js["breaks_added"].size(), 0u);
  EXPECT_EQ(js["ms_per_call_delta"], 0.0);
  auto missing = tcprof("diff " + a + " " + dir.file("none.db"), true);
  EXPECT_EQ(missing.exit_code, 2);
}

// A summary that sampled its calls' GPU work beside a run that recorded every call: the kernel
// totals would show false drops, so diff says they do not compare.
TEST(DiffCommand, SaysWhenGpuRowsCoverDifferentSharesOfTheCalls) {
  TempDir dir;
  std::string a = dir.file("a.db"), b = dir.file("b.db"), sampled = dir.file("sampled.db");
  write_synthetic_run(a, SyntheticRunOptions{});
  write_run_b(b);
  write_run_b(sampled, 3);
  auto plain = tcprof("diff " + a + " " + b + " --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(nlohmann::json::parse(plain.output)["kernel_caveat"], "") << "both recorded every call";
  auto r = tcprof("diff " + a + " " + sampled + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string caveat = nlohmann::json::parse(r.output)["kernel_caveat"];
  EXPECT_NE(caveat.find("all its calls in A and on 3 of 10 calls in B"), std::string::npos) << caveat;
  auto text = tcprof("diff " + a + " " + sampled);
  EXPECT_NE(text.output.find("note: GPU work was recorded on all its calls in A"), std::string::npos) << text.output;
  auto alike = tcprof("diff " + sampled + " " + sampled + " --json");
  EXPECT_EQ(nlohmann::json::parse(alike.output)["kernel_caveat"], "") << "sampled alike";
}

}  // namespace
}  // namespace tcprof
