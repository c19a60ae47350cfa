// Compile time by stage: each moment of a compile goes to the innermost stage covering it, the
// stages add up to the compile's time, cache lookups are counted, and a graph compiled again is
// found with what its repeats cost. On a run written through the real RunWriter; the imported
// PyTorch 2.15 runs are in tests/import/import_torch215_test.cpp.
#include <gtest/gtest.h>

#include "analysis/compile_time.h"
#include "core/run_writer.h"
#include "tests/test_support.h"

namespace tcprof::analysis {
namespace {

constexpr int64_t ms = 1000000;

int64_t stage(const std::array<int64_t, kCompileStages>& ns, CompileStage s) { return ns[static_cast<int>(s)]; }

TEST(CompileTime, TcprofPhasesGoToTheirStagesAndAddUp) {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  {
    RunInfo info;
    info.command = "run";
    info.model_path = "m.pt";
    RunWriter w(db, info);
    FrameEvent f;
    f.id = w.next_id();
    f.name = "forward";
    w.record(f);
    auto compile = [&](const char* label, int64_t at) {
      CompileEvent c;
      c.id = w.next_id();
      c.frame_id = f.id;
      c.compile_id = label;
      c.start_ns = at;
      c.duration_ns = 100 * ms;
      c.status = "ok";
      w.record(c);
      // capture 10 ms, then cpp_compile 90 ms holding lower 10, codegen 10 (with a nested
      // schedule of 5 that is still inductor), cc 50 and load 5: 15 ms of cpp_compile is no step.
      w.record(CompilePhaseEvent{c.id, "capture", at, 10 * ms});
      w.record(CompilePhaseEvent{c.id, "cpp_compile", at + 10 * ms, 90 * ms});
      w.record(CompilePhaseEvent{c.id, "lower", at + 10 * ms, 10 * ms});
      w.record(CompilePhaseEvent{c.id, "codegen", at + 20 * ms, 10 * ms});
      w.record(CompilePhaseEvent{c.id, "schedule", at + 22 * ms, 5 * ms});
      w.record(CompilePhaseEvent{c.id, "cc", at + 30 * ms, 50 * ms});
      w.record(CompilePhaseEvent{c.id, "load", at + 80 * ms, 5 * ms});
      w.record(CompilePhaseEvent{c.id, "fx_graph_cache_miss", at + 30 * ms, 0});
      GraphEvent g;
      g.id = w.next_id();
      g.compile_id = c.id;
      g.op_count = 3;
      g.ir = "graph(%x): relu";
      w.record(g);
      return c.id;
    };
    compile("0/0", 1000 * ms);
    compile("0/1", 2000 * ms);
    w.close();
  }
  RunReader reader(db);
  CompileTimeReport t = compile_time(reader, reader.runs().front().id);
  ASSERT_EQ(t.compiles.size(), 2u);
  const CompileTime& c = t.compiles[0];
  EXPECT_EQ(c.compile_label, "0/0");
  EXPECT_EQ(c.frame, "forward");
  EXPECT_EQ(c.total_ns, 100 * ms);
  EXPECT_EQ(stage(c.stage_ns, CompileStage::Dynamo), 10 * ms);
  EXPECT_EQ(stage(c.stage_ns, CompileStage::Inductor), 20 * ms);
  EXPECT_EQ(stage(c.stage_ns, CompileStage::CodeCompile), 55 * ms);
  EXPECT_EQ(stage(c.stage_ns, CompileStage::Other), 15 * ms);
  int64_t sum = 0;
  for (int64_t ns : c.stage_ns) sum += ns;
  EXPECT_EQ(sum, c.total_ns);
  EXPECT_EQ(c.cache.fx_misses, 1);
  EXPECT_EQ(t.total_ns, 200 * ms);
  ASSERT_EQ(t.frames.size(), 1u);
  EXPECT_EQ(t.frames[0].compiles, 2);
  // The same graph twice: the second compile could have been avoided.
  ASSERT_EQ(t.repeated.size(), 1u);
  EXPECT_EQ(t.repeated[0].compile_labels, (std::vector<std::string>{"0/0", "0/1"}));
  EXPECT_EQ(t.repeated[0].avoidable_ns, 100 * ms);
}

TEST(CompileTime, PhaseNamesOfBothBackends) {
  EXPECT_EQ(stage_of("entire_frame_compile"), CompileStage::Dynamo);
  EXPECT_EQ(stage_of("backend_compile"), CompileStage::AotAutograd);
  EXPECT_EQ(stage_of("inductor_compile"), CompileStage::Inductor);
  EXPECT_EQ(stage_of("PyCodeCache.load_by_key_path"), CompileStage::CodeCompile);
  EXPECT_EQ(stage_of("CachingAutotuner.benchmark_all_configs"), CompileStage::Autotuning);
  EXPECT_EQ(stage_of("nvrtc"), CompileStage::CodeCompile);
  EXPECT_EQ(stage_of("GraphLowering.run"), CompileStage::Other);  // a step inside a stage
  EXPECT_STREQ(stage_name(CompileStage::AotAutograd), "aot_autograd");
}

}  // namespace
}  // namespace tcprof::analysis
