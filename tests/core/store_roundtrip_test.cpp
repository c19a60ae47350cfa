// Every event type written through RunWriter comes back through RunReader unchanged.
#include <gtest/gtest.h>

#include <thread>

#include "core/error.h"
#include "core/run_reader.h"
#include "core/run_writer.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::TempDir;

RunInfo test_info() {
  RunInfo info;
  info.command = "run";
  info.model_path = "model.pt";
  info.model_sha256 = "abc123";
  info.stance = "fail_on_recompile";
  info.config_json = R"({"iters":3})";
  info.libtorch_version = "1.13.0";
  info.started_at = "2026-01-02T03:04:05Z";
  info.source = "torch_trace";
  info.rank = 1;
  info.world_size = 2;
  return info;
}

TEST(StoreRoundTrip, EveryEventTypeComesBack) {
  TempDir dir;
  std::string db = dir.file("run.db");
  Id run_id = 0, frame = 0, compile = 0, graph = 0, guard = 0, call = 0, compile2 = 0;
  {
    RunWriter w(db, test_info());
    run_id = w.run_id();
    frame = w.next_id();
    compile = w.next_id();
    compile2 = w.next_id();
    graph = w.next_id();
    guard = w.next_id();
    call = w.next_id();
    w.record(FrameEvent{frame, "forward", "blocks.0", "model.py", 12});
    w.record(CompileEvent{compile, frame, "0/0", "first call", 100, 50, "ok", false});
    w.record(CompileEvent{compile2, frame, "0/1", "size changed", 300, 20, "incomplete", true, 2});
    w.record(CompilePhaseEvent{compile, "capture", 100, 10});
    w.record(CompilePhaseEvent{compile, "codegen", 110, 40});
    w.record(GraphEvent{graph, compile, 7, "ir text", "code text", "aot_forward", "fx-key-1"});
    w.record(GraphEvent{w.next_id(), compile, 5, "captured ir", "", "captured", ""});
    w.record(SourceEvent{"/src/model.py", "f00d", "import torch\n"});
    w.record(GraphBreakEvent{compile, "side_effect", "TCB0001", "prim::Print", "print() in forward",
                             "remove print()", "model.py", 20, 5, "    print(x)", "blocks.0",
                             R"([{"file":"model.py","line":20}])"});
    w.record(GraphBreakEvent{compile2, "side_effect", "TCB0001", "prim::Print", "print() in forward",
                             "remove print()", "model.py", 20, 5, "    print(x)", "blocks.0", "[]"});
    w.record(GuardEvent{guard, compile, "size", "x.size(0) == 8", "model.py", 15});
    w.record(GuardFailureEvent{call, compile, guard, "8", "16", "tensor 'x' size mismatch at index 0"});
    w.record(RecompileEvent{frame, call, compile2, "size mismatch", 1});
    w.record(CallEvent{call, frame, compile2, 400, 30, "compiled", "[[16,4]]"});
    KernelEvent k;
    k.call_id = call;
    k.graph_id = graph;
    k.name_id = w.intern("fused_add_relu");
    k.kind_id = w.intern("generated");
    k.device_id = w.intern("cpu");
    k.start_ns = 405;
    k.duration_ns = 10;
    k.grid[0] = 4;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = 128;
    k.block[1] = k.block[2] = 1;
    k.correlation_id = 77;
    w.record(k);
    w.record(StepEvent{0, 500, 60, 1.5});
    w.record(StepEvent{1, 560, 40, std::nullopt});
    w.record(PerfHintEvent{compile, "fallback_kernel", "aten::topk", "no lowering", "model.py", 30});
    w.close();
  }

  RunReader r(db);
  auto runs = r.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, run_id);
  EXPECT_EQ(runs[0].status, "finished");
  EXPECT_EQ(runs[0].stance, "fail_on_recompile");
  EXPECT_EQ(runs[0].model_sha256, "abc123");
  EXPECT_EQ(runs[0].config_json, R"({"iters":3})");
  EXPECT_EQ(runs[0].started_at, "2026-01-02T03:04:05Z");
  EXPECT_EQ(runs[0].source, "torch_trace");
  EXPECT_EQ(runs[0].rank, 1);
  EXPECT_EQ(runs[0].world_size, 2);
  EXPECT_FALSE(runs[0].finished_at.empty());

  auto s = r.counts(run_id);
  EXPECT_EQ(s.frames, 1);
  EXPECT_EQ(s.compiles, 2);
  EXPECT_EQ(s.graphs, 1) << "the captured graph; the aot_forward graph compiled from it does not count again";
  EXPECT_EQ(s.graph_breaks, 2);
  EXPECT_EQ(s.guards, 1);
  EXPECT_EQ(s.guard_failures, 1);
  EXPECT_EQ(s.recompiles, 1);
  EXPECT_EQ(s.calls, 1);
  EXPECT_EQ(s.eager_calls, 0);
  EXPECT_EQ(s.kernels, 1);
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.perf_hints, 1);
  EXPECT_EQ(s.compile_time_ns, 70);

  auto frames = r.frames(run_id);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].module_path, "blocks.0");
  EXPECT_EQ(frames[0].line, 12);

  auto compiles = r.compiles(run_id);
  ASSERT_EQ(compiles.size(), 2u);
  EXPECT_EQ(compiles[0].compile_label, "0/0");
  EXPECT_TRUE(compiles[1].cache_hit);
  EXPECT_EQ(compiles[0].attempt, 0);
  EXPECT_EQ(compiles[1].attempt, 2);
  EXPECT_EQ(compiles[1].status, "incomplete");

  auto sources = r.sources(run_id);
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0].file, "/src/model.py");
  EXPECT_EQ(sources[0].sha256, "f00d");
  EXPECT_EQ(sources[0].text, "import torch\n");

  auto phases = r.compile_phases(run_id);
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[1].phase, "codegen");
  EXPECT_EQ(phases[1].duration_ns, 40);

  auto graphs = r.graphs(run_id);
  ASSERT_EQ(graphs.size(), 2u);
  EXPECT_FALSE(graphs[0].captured());
  EXPECT_TRUE(graphs[1].captured());
  EXPECT_EQ(graphs[0].compile_label, "0/0");
  EXPECT_EQ(graphs[0].kind, "aot_forward");
  EXPECT_EQ(graphs[0].fx_key, "fx-key-1");
  EXPECT_EQ(graphs[0].op_count, 7);
  EXPECT_EQ(graphs[0].code, "code text");

  auto breaks = r.graph_breaks(run_id);
  ASSERT_EQ(breaks.size(), 2u);
  EXPECT_EQ(breaks[0].frame_id, frame);
  EXPECT_EQ(breaks[0].break_id, "TCB0001");
  EXPECT_EQ(breaks[0].line, 20);
  EXPECT_EQ(breaks[0].col, 5);
  EXPECT_EQ(breaks[0].source, "    print(x)");
  EXPECT_EQ(breaks[0].module_path, "blocks.0");
  EXPECT_EQ(breaks[0].stack_json, R"([{"file":"model.py","line":20}])");

  auto recompiles = r.recompiles(run_id);
  ASSERT_EQ(recompiles.size(), 1u);
  EXPECT_EQ(recompiles[0].compile_label, "0/1");
  EXPECT_EQ(recompiles[0].frame_name, "forward");
  EXPECT_EQ(recompiles[0].call_id, call);

  auto failures = r.guard_failures(run_id);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].guard_expr, "x.size(0) == 8");
  EXPECT_EQ(failures[0].guard_line, 15);
  EXPECT_EQ(failures[0].compile_label, "0/0");
  EXPECT_EQ(failures[0].expected, "8");
  EXPECT_EQ(failures[0].actual, "16");

  auto calls = r.calls(run_id);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].input_shapes, "[[16,4]]");

  std::vector<KernelRow> kernels;
  r.for_each_kernel(run_id, [&](const KernelRow& row) { kernels.push_back(row); });
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].name, "fused_add_relu");
  EXPECT_EQ(kernels[0].kind, "generated");
  EXPECT_EQ(kernels[0].device, "cpu");
  EXPECT_EQ(kernels[0].correlation_id, 77);
  EXPECT_EQ(kernels[0].graph_id, graph);

  auto steps = r.steps(run_id);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_DOUBLE_EQ(*steps[0].loss, 1.5);
  EXPECT_FALSE(steps[1].loss.has_value());

  auto hints = r.perf_hints(run_id);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].op, "aten::topk");

  auto range = r.time_range(run_id);
  EXPECT_EQ(range.start_ns, 100);
  EXPECT_EQ(range.end_ns, 600);
}

TEST(StoreRoundTrip, IdsAreUniqueAcrossRunsInOneFile) {
  TempDir dir;
  std::string db = dir.file("two.db");
  RunInfo info;
  info.command = "test";
  RunWriter a(db, info);
  RunWriter b(db, info);  // two writers at once, as two processes would
  EXPECT_NE(a.run_id(), b.run_id());
  Id fa = a.next_id(), fb = b.next_id();
  EXPECT_NE(fa, fb);
  a.record(FrameEvent{fa, "forward", "", "a.py", 1});
  b.record(FrameEvent{fb, "forward", "", "b.py", 1});
  a.close();
  b.close();
  RunReader r(db);
  EXPECT_EQ(r.runs().size(), 2u);
  EXPECT_EQ(r.frames(a.run_id()).at(0).file, "a.py");
  EXPECT_EQ(r.frames(b.run_id()).at(0).file, "b.py");
}

}  // namespace
}  // namespace tcprof
