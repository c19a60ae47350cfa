// Per sample: graph and break counts, break types, ids, lines and module paths, guard
// expressions, and outputs equal to the uncompiled module.
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "tests/compiler/compiler_test_support.h"
#include "core/error.h"
#include "core/run_reader.h"
#include "core/run_writer.h"
#include "core/sha256.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::breaks_of;
using testing::expect_compiled_matches_eager;
using testing::expect_same_output;
using testing::graph_count;
using testing::inputs_for;
using testing::sample;

struct BreakCase {
  const char* model;
  const char* type;
  const char* id;
  int line;
};

class BreakSamples : public ::testing::TestWithParam<BreakCase> {};

TEST_P(BreakSamples, OneBreakAtTheUserLineAndSameOutput) {
  const BreakCase& c = GetParam();
  auto model = load_model(sample(c.model));
  CompiledModule m(model, CompileOptions{}, nullptr);
  CompiledModule reference(load_model(sample(c.model)), CompileOptions{}, nullptr);
  auto in = inputs_for({"f32[4,8]"});
  c10::IValue out = m.call(in);
  expect_same_output(out, reference.call_eager(in));
  auto breaks = breaks_of(m);
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].type, c.type);
  EXPECT_EQ(breaks[0].id, c.id);
  EXPECT_EQ(breaks[0].file, "breaks.py");
  EXPECT_EQ(breaks[0].line, c.line);
  EXPECT_EQ(graph_count(m), 2);
  // A second call with the same shapes reuses both graphs (the mutating model is covered below).
  if (std::string(c.model) == "module_state_mutation") return;
  m.call(in);
  EXPECT_EQ(m.stats().compiles, 2);
  EXPECT_EQ(m.stats().recompiles, 0);
}

INSTANTIATE_TEST_SUITE_P(
    EveryBreakType, BreakSamples,
    ::testing::Values(BreakCase{"print_in_forward", "side_effect", "TCB0001", 14},
                      BreakCase{"warn_in_forward", "side_effect", "TCB0002", 50},
                      BreakCase{"data_dependent_branch", "data_dependent_branch", "TCB0004", 21},
                      BreakCase{"scalar_output", "scalar_output", "TCB0006", 28},
                      BreakCase{"dynamic_output_shape", "dynamic_output_shape", "TCB0008", 34},
                      BreakCase{"module_state_mutation", "module_state_mutation", "TCB0011", 44}),
    [](const auto& info) { return std::string(info.param.model); });

TEST(CaptureSamples, RaiseBreaksAndPropagatesTheModelsError) {
  CompiledModule m(load_model(sample("raise_in_forward")), CompileOptions{}, nullptr);
  auto ok = inputs_for({"f32[3]", "bool:false"});
  expect_compiled_matches_eager(m, ok);
  EXPECT_TRUE(breaks_of(m).empty());  // the branch is decided on the bool input: a guard
  try {
    m.call(inputs_for({"f32[3]", "bool:true"}));
    FAIL() << "the model should have raised";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("RuntimeError at"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("strict mode rejects this input"), std::string::npos) << e.what();
  }
  auto breaks = breaks_of(m);
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].id, "TCB0003");
  EXPECT_EQ(breaks[0].line, 126);
}

TEST(CaptureSamples, DictOfTensorsIsAnUnsupportedValue) {
  CompiledModule m(load_model(sample("dict_in_forward")), CompileOptions{}, nullptr);
  auto in = inputs_for({"f32[5]"});
  expect_compiled_matches_eager(m, in);
  auto breaks = breaks_of(m);
  ASSERT_FALSE(breaks.empty());
  EXPECT_EQ(breaks[0].type, "unsupported_value");
  EXPECT_EQ(breaks[0].line, 132);
}

TEST(CaptureSamples, DynamicSizeWithoutShapeRuleEndsTheGraphBeforeTheRead) {
  CompileOptions o;
  o.dynamic.push_back({0, 1});
  CompiledModule m(load_model(sample("no_shape_rule")), o, nullptr);
  for (int64_t width : {3, 5, 9}) {
    auto in = inputs_for({fmt::format("f32[2,{}]", width)});
    expect_compiled_matches_eager(m, in);
  }
  auto breaks = breaks_of(m);
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].id, "TCB0012");
  EXPECT_EQ(breaks[0].type, "unsupported_op");
  EXPECT_EQ(m.stats().recompiles, 0);  // the resume frame reads the size from its own input
  // Without dynamic dimensions every size is static and nothing breaks.
  CompiledModule fixed(load_model(sample("no_shape_rule")), CompileOptions{}, nullptr);
  fixed.call(inputs_for({"f32[2,3]"}));
  EXPECT_TRUE(breaks_of(fixed).empty());
}

TEST(CaptureSamples, MutatedAttributeFailsItsGuardOnTheNextCall) {
  testing::TempDir dir;
  CompiledModule m(load_model(sample("module_state_mutation")), CompileOptions{}, nullptr);
  auto in = inputs_for({"f32[4,8]"});
  m.call(in);
  m.call(in);
  EXPECT_EQ(m.stats().recompiles, 1);
  const auto& guards = m.frames()[0]->entries[0]->guards.guards();
  GuardFailure f = m.frames()[0]->entries[0]->guards.explain_failure(in, {"x"});
  EXPECT_EQ(guards[f.guard_index].text, "self.calls == 0");
  EXPECT_EQ(f.message, "attribute self.calls changed: expected 0, actual 2");
}

TEST(CaptureSamples, DataDependentBranchResumesInTheBranchTaken) {
  CompiledModule m(load_model(sample("data_dependent_branch")), CompileOptions{}, nullptr);
  auto positive = inputs_for({"f32[4,8]"});
  positive[0] = positive[0].toTensor().abs() + 1;
  auto negative = inputs_for({"f32[4,8]"});
  negative[0] = -(negative[0].toTensor().abs() + 1);
  expect_compiled_matches_eager(m, positive);
  expect_compiled_matches_eager(m, negative);
  // The root graph, then one resume frame per branch: no recompiles, as in Dynamo.
  EXPECT_EQ(m.frames().size(), 3u);
  EXPECT_EQ(m.stats().compiles, 3);
  EXPECT_EQ(m.stats().recompiles, 0);
  m.call(positive);
  m.call(negative);
  EXPECT_EQ(m.stats().compiles, 3);
}

TEST(CaptureSamples, SubmoduleBreaksCarryModulePathAndStack) {
  CompiledModule m(load_model(sample("submodule_break")), CompileOptions{}, nullptr);
  auto in = inputs_for({"f32[4,8]"});
  expect_compiled_matches_eager(m, in);
  auto breaks = breaks_of(m);
  ASSERT_EQ(breaks.size(), 2u);
  EXPECT_EQ(breaks[0].module_path, "blocks.0.attn");
  EXPECT_EQ(breaks[1].module_path, "blocks.1.attn");
  EXPECT_EQ(breaks[0].line, 72);
  const auto& stack = m.frames()[0]->entries[0]->exit.site.stack;
  ASSERT_EQ(stack.size(), 3u);  // forward -> blocks.0.forward -> blocks.0.attn.forward
  EXPECT_EQ(stack[0].module_path, "");
  EXPECT_EQ(stack[1].module_path, "blocks.0");
  EXPECT_EQ(stack[2].module_path, "blocks.0.attn");
  EXPECT_EQ(stack[0].loc.line, 93);  // x = block(x) in SubmoduleBreak.forward
  EXPECT_EQ(graph_count(m), 3);
}

TEST(CaptureSamples, ShapeDecisionsBecomeGuardsWithUserLines) {
  CompiledModule m(load_model(sample("shape_guarded_branch")), CompileOptions{}, nullptr);
  auto in = inputs_for({"f32[4,3]"});
  expect_compiled_matches_eager(m, in);
  EXPECT_TRUE(breaks_of(m).empty());
  std::vector<std::pair<std::string, int>> decisions;
  for (const auto& g : m.frames()[0]->entries[0]->guards.guards()) {
    if (g.kind == GuardKind::ShapeExpr) decisions.emplace_back(g.text, g.loc.line);
  }
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[0], std::make_pair(std::string("not (x.size(0) > 4)"), 56));
  EXPECT_EQ(decisions[1], std::make_pair(std::string("x.size(1) == 3"), 60));
  // The other branch needs another graph: a recompile explained by the size guard.
  auto big = inputs_for({"f32[6,3]"});
  expect_compiled_matches_eager(m, big);
  EXPECT_EQ(m.stats().recompiles, 1);
}

// A list built by a comprehension after a graph break (`p = [f(t) for t in x.split(..)]`): the
// empty list is a constant until appended to. Appending to that constant grew one list shared by
// every call, and later calls read the first call's tensors.
TEST(CaptureSamples, AListBuiltInALoopHoldsEachCallsValues) {
  testing::TempDir dir;
  const std::string path = testing::save_scripted(
      "def forward(self, x):\n  p = [t * 2 for t in x.split(2, dim=1)]\n  return p[0] + p[1]\n", dir.file("list_comprehension.pt"));
  for (const char* backend : {"cpp", "eager"}) {
    CompileOptions o;
    o.backend = backend;
    CompiledModule m(load_model(path), o, nullptr);
    for (int64_t call = 0; call < 3; ++call) {
      auto in = inputs_for({"f32[3,4]"}, call);
      expect_compiled_matches_eager(m, in);
    }
  }
}

TEST(CaptureSamples, GptIsOneGraphAndMatchesEager) {
  CompiledModule m(load_model(sample("gpt_tiny")), CompileOptions{}, nullptr);
  auto in = inputs_for({"i64[2,16](0,512)"});
  expect_compiled_matches_eager(m, in);
  EXPECT_TRUE(breaks_of(m).empty());
  EXPECT_EQ(graph_count(m), 1);
  EXPECT_GT(m.frames()[0]->entries[0]->graph.op_count(), 50u);
}

TEST(CaptureSamples, CnnIsOneGraphAndMatchesEager) {
  CompiledModule m(load_model(sample("cnn")), CompileOptions{}, nullptr);
  auto in = inputs_for({"f32[2,3,32,32]"});
  expect_compiled_matches_eager(m, in);
  EXPECT_TRUE(breaks_of(m).empty());
  EXPECT_EQ(graph_count(m), 1);
}

// The run keeps the user's source files (sources table): a reader needs neither the model file
// nor the .py. Each line sits at its own number, so the break's line reads as recorded.
TEST(CaptureSamples, TheRunRecordsTheUsersSourceFiles) {
  testing::TempDir dir;
  std::string db = dir.file("sources.db");
  RunInfo info;
  info.command = "test";
  Id run_id;
  {
    RunWriter w(db, info);
    run_id = w.run_id();
    CompiledModule m(load_model(sample("submodule_break")), CompileOptions{}, &w);
    m.call(inputs_for({"f32[4,8]"}));
  }
  RunReader reader(db);
  auto sources = reader.sources(run_id);
  ASSERT_EQ(sources.size(), 1u);  // breaks.py only: torch's own files are not the user's
  EXPECT_EQ(std::filesystem::path(sources[0].file).filename(), "breaks.py");
  EXPECT_EQ(sources[0].sha256, sha256_hex(sources[0].text));
  auto breaks = reader.graph_breaks(run_id);
  ASSERT_FALSE(breaks.empty());
  std::istringstream lines(sources[0].text);
  std::string line;
  for (int n = 1; n <= breaks[0].line && std::getline(lines, line); ++n) {
  }
  EXPECT_EQ(line, breaks[0].source) << "line " << breaks[0].line;
  EXPECT_NE(sources[0].text.find("        for block in self.blocks:\n            x = block(x)"), std::string::npos);  // not a break line
}

}  // namespace
}  // namespace tcprof
