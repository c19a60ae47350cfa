// Guards, recompiles, automatic dynamic shapes, the recompile limit, stances and fullgraph, with
// what they record in the run database.
#include <fmt/format.h>

#include "analysis/recompiles.h"
#include "compiler/runtime/compiled_module.h"
#include "core/error.h"
#include "core/run_reader.h"
#include "core/run_writer.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::expect_same_output;
using testing::inputs_for;
using testing::sample;

std::vector<c10::IValue> tokens(int64_t seq) { return inputs_for({fmt::format("i64[2,{}](0,512)", seq)}); }

TEST(Recompiles, VaryingLengthCompilesOnceThenDynamicThenNever) {
  testing::TempDir dir;
  std::string db = dir.file("run.db");
  RunInfo info;
  info.command = "test";
  Id run_id;
  {
    RunWriter w(db, info);
    run_id = w.run_id();
    CompiledModule m(load_model(sample("gpt_tiny")), CompileOptions{}, &w);
    for (int64_t seq : {16, 24, 40, 8, 33, 64}) {
      auto in = tokens(seq);
      expect_same_output(m.call(in), m.call_eager(in));
    }
    EXPECT_EQ(m.stats().compiles, 2);
    EXPECT_EQ(m.stats().recompiles, 1);
    EXPECT_EQ(m.stats().guard_failures, 1);
    // The recompiled entry treats the sequence dimension as symbolic.
    const auto& guards = m.frames()[0]->entries[1]->guards.guards();
    bool dynamic = false;
    for (const auto& g : guards) dynamic = dynamic || (g.kind == GuardKind::DynamicSize && g.dim == 1);
    EXPECT_TRUE(dynamic);
  }
  RunReader r(db);
  auto recompiles = analysis::recompiles_with_failures(r, run_id);
  ASSERT_EQ(recompiles.size(), 1u);
  EXPECT_EQ(recompiles[0].compile_label, "0/1");
  ASSERT_EQ(recompiles[0].failures.size(), 1u);
  EXPECT_EQ(recompiles[0].failures[0].expected, "16");
  EXPECT_EQ(recompiles[0].failures[0].actual, "24");
  EXPECT_EQ(recompiles[0].failures[0].message, "tensor 'idx' size mismatch at index 1: expected 16, actual 24");
  EXPECT_EQ(r.counts(run_id).calls, 6);
  EXPECT_EQ(r.counts(run_id).compiles, 2);
}

TEST(Recompiles, MarkDynamicFromTheStartNeverRecompiles) {
  CompileOptions o;
  o.dynamic.push_back({0, 1});
  CompiledModule m(load_model(sample("gpt_tiny")), o, nullptr);
  for (int64_t seq : {16, 24, 40}) {
    auto in = tokens(seq);
    expect_same_output(m.call(in), m.call_eager(in));
  }
  EXPECT_EQ(m.stats().compiles, 1);
  EXPECT_EQ(m.stats().recompiles, 0);
}

TEST(Recompiles, LimitMakesTheFrameRunEagerly) {
  CompileOptions o;
  o.recompile_limit = 2;
  CompiledModule m(load_model(sample("shape_guarded_branch")), o, nullptr);
  // Dimension 1 is a loop trip count: every width is its own graph.
  for (int64_t width : {2, 3, 4, 5, 6}) {
    auto in = inputs_for({fmt::format("f32[3,{}]", width)});
    expect_same_output(m.call(in), m.call_eager(in));
  }
  EXPECT_EQ(m.stats().compiles, 2);
  EXPECT_EQ(m.stats().recompile_limit_hits, 1);
  EXPECT_EQ(m.stats().eager_calls, 3);
}

TEST(Stances, ForceEagerNeverCompiles) {
  CompileOptions o;
  o.stance = Stance::ForceEager;
  CompiledModule m(load_model(sample("print_in_forward")), o, nullptr);
  auto in = inputs_for({"f32[4,8]"});
  expect_same_output(m.call(in), m.call_eager(in));
  EXPECT_EQ(m.stats().compiles, 0);
  EXPECT_EQ(m.stats().eager_calls, 1);
}

TEST(Stances, EagerThenCompileCompilesFromTheSecondCall) {
  CompileOptions o;
  o.stance = Stance::EagerThenCompile;
  CompiledModule m(load_model(sample("gpt_tiny")), o, nullptr);
  m.call(tokens(16));
  EXPECT_EQ(m.stats().compiles, 0);
  m.call(tokens(16));
  EXPECT_EQ(m.stats().compiles, 1);
  EXPECT_EQ(m.stats().eager_calls, 1);
}

// PyTorch's stance: the eager first call shows which dims change, so the first compile already
// treats them as dynamic and no size recompiles follow.
TEST(Stances, EagerThenCompileLearnsDynamicDimsFromTheEagerCall) {
  CompileOptions o;
  o.stance = Stance::EagerThenCompile;
  CompiledModule m(load_model(sample("gpt_tiny")), o, nullptr);
  for (int64_t seq : {16, 24, 40, 8}) {
    auto in = tokens(seq);
    expect_same_output(m.call(in), m.call_eager(in));
  }
  EXPECT_EQ(m.stats().compiles, 1);
  EXPECT_EQ(m.stats().recompiles, 0);
  EXPECT_EQ(m.stats().eager_calls, 1);
}

// Automatic dynamic marks every size that changed, not only the first failing guard's: two
// inputs whose batch changes together recompile once, not once per input.
TEST(Recompiles, AutomaticDynamicMarksEveryChangedDimension) {
  CompiledModule m(load_model(sample("four_inputs")), CompileOptions{}, nullptr);
  for (int64_t n : {4, 6, 9, 12}) {
    std::string spec = fmt::format("f32[{}]", n);
    auto in = inputs_for({spec, spec, spec, spec});
    expect_same_output(m.call(in), m.call_eager(in));
  }
  EXPECT_EQ(m.stats().compiles, 2);
  EXPECT_EQ(m.stats().recompiles, 1);
}

// What a break runs eagerly sees this call's values: after the recompile that makes the rows
// dynamic, print(y.shape) printed the shape of the call that compiled ([10, 16]) on every hit.
TEST(Recompiles, ABreaksSideEffectSeesThisCallsValuesAfterARecompile) {
  CompiledModule m(load_model(sample("print_in_forward")), CompileOptions{}, nullptr);
  ::testing::internal::CaptureStdout();
  for (int64_t rows : {2, 10, 7, 5, 5, 13}) m.call(inputs_for({fmt::format("f32[{},16]", rows)}));
  std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(printed, "debug [2, 16]\ndebug [10, 16]\ndebug [7, 16]\ndebug [5, 16]\ndebug [5, 16]\ndebug [13, 16]\n");
  EXPECT_EQ(m.stats().compiles, 4);  // a frame before the print and its resume frame, each recompiled once
}

TEST(Stances, EagerOnRecompileKeepsTheFirstGraph) {
  CompileOptions o;
  o.stance = Stance::EagerOnRecompile;
  CompiledModule m(load_model(sample("gpt_tiny")), o, nullptr);
  m.call(tokens(16));
  auto other = tokens(24);
  expect_same_output(m.call(other), m.call_eager(other));
  m.call(tokens(16));
  EXPECT_EQ(m.stats().compiles, 1);
  EXPECT_EQ(m.stats().eager_calls, 1);
}

TEST(Stances, FailOnRecompileNamesGuardExpectedActualAndLine) {
  CompileOptions o;
  o.stance = Stance::FailOnRecompile;
  CompiledModule m(load_model(sample("shape_guarded_branch")), o, nullptr);
  m.call(inputs_for({"f32[4,3]"}));
  try {
    m.call(inputs_for({"f32[4,5]"}));
    FAIL() << "expected fail_on_recompile";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Check);
    std::string msg = e.what();
    EXPECT_NE(msg.find("tensor 'x' size mismatch at index 1: expected 3, actual 5"), std::string::npos) << msg;
  }
}

TEST(Stances, FullgraphTurnsTheFirstBreakIntoAnError) {
  CompileOptions o;
  o.fullgraph = true;
  CompiledModule m(load_model(sample("print_in_forward")), o, nullptr);
  try {
    m.call(inputs_for({"f32[4,8]"}));
    FAIL() << "expected a fullgraph error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Check);
    std::string msg = e.what();
    EXPECT_NE(msg.find("TCB0001"), std::string::npos) << msg;
    EXPECT_NE(msg.find("breaks.py:14"), std::string::npos) << msg;
  }
  // A model without breaks is fine under fullgraph.
  CompiledModule clean(load_model(sample("gpt_tiny")), o, nullptr);
  EXPECT_NO_THROW(clean.call(tokens(8)));
}

TEST(Guards, AttributeAndGradModeChangesRecompile) {
  CompiledModule m(load_model(sample("gpt_tiny")), CompileOptions{}, nullptr);
  m.call(tokens(8));
  {
    at::NoGradGuard no_grad;
    m.call(tokens(8));
  }
  EXPECT_EQ(m.stats().recompiles, 1);
}

}  // namespace
}  // namespace tcprof
