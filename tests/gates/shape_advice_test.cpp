// Shape advice on runs with known sizes: which dimension varied, which sizes recompiled, and the
// padding multiple and cost it proposes.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "cli/shape_advice.h"
#include "core/run_writer.h"
#include "samples/synthetic_run.h"
#include "tests/gates/gates_support.h"

namespace tcprof {
namespace {

using analysis::SizeSeen;

TEST(ShapeAdvice, PaddingPicksTheCheapestMultipleWithinTheLimit) {
  // 10, 20, 30, 40: multiples of 8 give 16..40, 4 graphs, 12 extra elements per 100.
  std::vector<SizeSeen> sizes = {{10, 1, 0}, {20, 1, 0}, {30, 1, 0}, {40, 1, 0}};
  auto p = analysis::plan_padding(sizes, 8);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->multiple, 8);
  EXPECT_EQ(p->graphs, 4);
  EXPECT_EQ(p->padded_lo, 16);
  EXPECT_EQ(p->padded_hi, 40);
  EXPECT_NEAR(p->extra_percent, 12.0, 1e-9);
  // With room for only two graphs the multiple must be 32: 32 and 64.
  auto two = analysis::plan_padding(sizes, 2);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->multiple, 32);
  EXPECT_EQ(two->graphs, 2);
  EXPECT_NEAR(two->extra_percent, 60.0, 1e-9);
  // Sequence lengths 16..256 under the default limit: 8 graphs of a multiple of 32.
  std::vector<SizeSeen> seq;
  for (int64_t s = 16; s <= 256; ++s) seq.push_back({s, 1, 0});
  auto q = analysis::plan_padding(seq, 8);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->multiple, 32);
  EXPECT_EQ(q->graphs, 8);
}

std::vector<CallRow> calls_with(const std::vector<std::string>& shapes) {
  std::vector<CallRow> calls;
  for (size_t i = 0; i < shapes.size(); ++i) {
    CallRow c;
    c.id = static_cast<Id>(100 + i);
    c.input_shapes = shapes[i];
    c.path = "compiled";
    calls.push_back(c);
  }
  return calls;
}

TEST(ShapeAdvice, SaysWhichGuardFailedASizeGuardOrADecisionOnASize) {
  // Dim 0 takes sizes 2, 6, 3, 7: the first recompile is a size guard, the later ones a branch on
  // `x.size(0) > 4` flipping (with dim 0 dynamic, only the decision fails).
  auto calls = calls_with({"[[2,3]]", "[[6,3]]", "[[3,3]]", "[[7,3]]"});
  auto failure = [](const char* kind, const char* expr, const char* message) {
    GuardFailureRow f;
    f.guard_kind = kind;
    f.guard_expr = expr;
    f.guard_file = "model.py";
    f.guard_line = 56;
    f.message = message;
    return f;
  };
  std::vector<RecompileRow> recompiles(3);
  recompiles[0].call_id = 101;
  recompiles[0].failures = {failure("size", "x.size(0) == 2", "tensor 'x' size mismatch at index 0: expected 2, actual 6")};
  recompiles[1].call_id = 102;
  recompiles[1].failures = {failure("shape_expr", "x.size(0) > 4", "shape guard 'x.size(0) > 4' is False")};
  recompiles[2].call_id = 103;
  recompiles[2].failures = {failure("shape_expr", "not (x.size(0) > 4)", "shape guard is True")};
  auto advice = analysis::compute_shape_advice(calls, recompiles, {}, {}, 8);
  ASSERT_EQ(advice.dims.size(), 1u);
  const auto& d = advice.dims[0];
  EXPECT_EQ(d.recompiles, 3);
  EXPECT_EQ(d.size_guard_recompiles, 1);
  ASSERT_EQ(d.decisions.size(), 1u);  // both outcomes are one decision
  EXPECT_EQ(d.decisions[0].expr, "x.size(0) > 4");
  EXPECT_EQ(d.decisions[0].recompiles, 2);
  EXPECT_NE(d.recommendation, "branch");  // the size guard part is what --dynamic removes

  // Only the decision recompiling: dynamic cannot help.
  recompiles.erase(recompiles.begin());
  auto only = analysis::compute_shape_advice(calls, recompiles, {}, {}, 8);
  ASSERT_EQ(only.dims.size(), 1u);
  EXPECT_EQ(only.dims[0].recommendation, "branch");
}

TEST(ShapeAdvice, AttributesRecompilesToTheDimensionThatChanged) {
  // Input 0 is [4, T] with T in 10, 20, 30, 40, 20; input 1 is always [4].
  auto calls = calls_with({"[[4,10],[4]]", "[[4,20],[4]]", "[[4,30],[4]]", "[[4,40],[4]]", "[[4,20],[4]]"});
  std::vector<RecompileRow> recompiles;
  for (Id call : {101, 102}) {
    RecompileRow r;
    r.call_id = call;
    GuardFailureRow f;
    f.message = "tensor 'x' size mismatch at index 1: expected 10, actual 20";
    r.failures.push_back(f);
    recompiles.push_back(r);
  }
  auto advice = analysis::compute_shape_advice(calls, recompiles, {}, {}, 8);
  ASSERT_EQ(advice.dims.size(), 1u);
  const auto& d = advice.dims[0];
  EXPECT_EQ(d.input, 0);
  EXPECT_EQ(d.dim, 1);
  EXPECT_EQ(d.recompiles, 2);
  ASSERT_EQ(d.sizes.size(), 4u);
  EXPECT_EQ(d.sizes[1].size, 20);
  EXPECT_EQ(d.sizes[1].calls, 2);
  EXPECT_EQ(d.sizes[1].recompiles, 1);
  EXPECT_EQ(d.sizes[2].recompiles, 1);
  EXPECT_EQ(d.sizes[3].recompiles, 0);
  EXPECT_EQ(d.dynamic_flag, "--dynamic 0:1");
  ASSERT_TRUE(d.pad);
  EXPECT_EQ(d.pad->multiple, 8);
  EXPECT_EQ(d.pad->graphs, 4);
  EXPECT_NEAR(d.pad->extra_percent, 100.0 * 16 / 120, 1e-9);  // 20 occurs twice: +4 twice
  EXPECT_EQ(d.recommendation, "pad");
  EXPECT_EQ(advice.unattributed_recompiles, 0);
}

TEST(ShapeAdvice, WideRangesWithATightLimitAdviseDynamic) {
  std::vector<std::string> shapes;
  for (int64_t t : {8, 1000, 9, 2000, 17, 4000}) shapes.push_back(fmt::format("[[2,{}]]", t));
  auto advice = analysis::compute_shape_advice(calls_with(shapes), {}, {}, {}, 2);
  ASSERT_EQ(advice.dims.size(), 1u);
  EXPECT_EQ(advice.dims[0].recommendation, "dynamic");
}

TEST(ShapeAdvice, FlagsAlignmentGuards) {
  std::vector<GuardRow> guards = {{1, 10, "shape_expr", "s0 % 8 == 0", "model.py", 12},
                                  {2, 11, "shape_expr", "not (s0 % 8 == 0)", "model.py", 12},
                                  {3, 10, "size", "x.size(0) == 4", "", 0}};
  GuardFailureRow failure;
  failure.guard_id = 1;
  auto advice = analysis::compute_shape_advice(calls_with({"[[4,8]]"}), {}, guards, {failure, failure}, 8);
  EXPECT_TRUE(advice.dims.empty());
  ASSERT_EQ(advice.alignment.size(), 1u);
  EXPECT_EQ(advice.alignment[0].multiple, 8);
  EXPECT_EQ(advice.alignment[0].line, 12);
  EXPECT_EQ(advice.alignment[0].failures, 2);
  EXPECT_EQ(advice.alignment[0].graphs, 2);
  EXPECT_EQ(advice.alignment[0].expr, "s0 % 8 == 0");
  fmt::memory_buffer out;
  cli::write_shape_advice_text(out, advice);
  EXPECT_NE(fmt::to_string(out).find("alignment: s0 % 8 == 0 at model.py:12"), std::string::npos)
      << fmt::to_string(out);
}

TEST(ShapeAdvice, ReportShowsTheSyntheticRunsAdvice) {
  testing::TempDir dir;
  std::string db = dir.file("run.db");
  write_synthetic_run(db, SyntheticRunOptions{});
  auto text = testing::tcprof("report " + db);
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("input 0 dim 1: sizes 64, 96 over 20 calls, 1 recompile at 96\n"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("advice: pad to a multiple of 32 (+0.0% elements)"), std::string::npos) << text.output;
  auto json = testing::tcprof("report " + db + " --json");
  auto j = nlohmann::json::parse(json.output);
  const auto& dims = j["runs"][0]["shape_advice"]["dims"];
  ASSERT_EQ(dims.size(), 1u);
  EXPECT_EQ(dims[0]["recompiles"], 1);
  EXPECT_EQ(dims[0]["pad"]["multiple"], 32);
  EXPECT_EQ(dims[0]["sizes"][1]["size"], 96);
  EXPECT_EQ(dims[0]["sizes"][1]["calls"], 19);
}

}  // namespace
}  // namespace tcprof

namespace tcprof {
namespace {

// End to end: a real branch on divisibility, run with varying sizes, is flagged by the report.
TEST(ShapeAdvice, ReportFlagsARealAlignmentBranch) {
  testing::TempDir dir;
  std::string db = dir.file("aligned.db");
  auto run = testing::tcprof("run " + testing::sample_model("gate_aligned") +
                             " --input 'f32[4,16]' --vary 0:1=8,13,16,24,29,32 --iters 12 --db " + db + " 2>&1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto report = testing::tcprof("report " + db);
  EXPECT_NE(report.output.find("alignment: x.size(1) % 8 == 0 at"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("gate_variants.py:53"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("pad to a multiple of 8 to keep one aligned graph"), std::string::npos) << report.output;
  auto j = nlohmann::json::parse(testing::tcprof("report " + db + " --json").output);
  const auto& alignment = j["runs"][0]["shape_advice"]["alignment"];
  ASSERT_EQ(alignment.size(), 1u);
  EXPECT_EQ(alignment[0]["multiple"], 8);
  EXPECT_GE(alignment[0]["graphs"].get<int>(), 2);
}

}  // namespace
}  // namespace tcprof
