// Baselines: the JSON round trip, portability (file names, no lines in the match) and clear
// errors for missing or malformed files.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/baseline.h"
#include "core/error.h"
#include "tests/gates/gates_support.h"

namespace tcprof {
namespace {

using analysis::Baseline;
using analysis::BreakSite;
using analysis::FrameView;
using testing::TempDir;

Baseline sample_baseline() {
  Baseline b;
  b.model = "model.pt";
  b.workload = {{"inputs", {"f32[4,8]"}}, {"iters", 4}};
  FrameView root;
  root.key = "forward";
  root.graphs = 2;
  root.recompiles = 1;
  root.eager_fallbacks = 0;
  BreakSite s;
  s.type = "side_effect";
  s.break_id = "TCB0001";
  s.op = "prim::Print";
  s.file = "model.py";
  s.line = 25;
  s.source = "print(\"debug\", y.shape)";
  s.module_path = "blocks.0";
  s.count = 2;
  s.key = analysis::site_key(s.type, s.break_id, s.file, s.source, s.module_path);
  root.breaks.push_back(s);
  FrameView resume;
  resume.key = "forward (resume after model.py) in blocks.0";
  resume.graphs = 1;
  resume.eager_fallbacks = 3;
  b.frames = {root, resume};
  return b;
}

TEST(Baseline, JsonRoundTripKeepsEveryField) {
  Baseline before = sample_baseline();
  TempDir dir;
  cli::save_baseline(before, dir.file("b.json"));
  Baseline after = cli::load_baseline(dir.file("b.json"));
  EXPECT_EQ(after.model, "model.pt");
  EXPECT_EQ(after.workload, before.workload);
  ASSERT_EQ(after.frames.size(), 2u);
  EXPECT_EQ(after.frames[0].key, "forward");
  EXPECT_EQ(after.frames[0].graphs, 2);
  EXPECT_EQ(after.frames[0].recompiles, 1);
  ASSERT_EQ(after.frames[0].breaks.size(), 1u);
  const BreakSite& s = after.frames[0].breaks[0];
  EXPECT_EQ(s.key, before.frames[0].breaks[0].key);
  EXPECT_EQ(s.line, 25);
  EXPECT_EQ(s.count, 2);
  EXPECT_EQ(after.frames[1].eager_fallbacks, 3);
  // Writing it again gives the same bytes: diffs of a committed baseline show real changes only.
  cli::save_baseline(after, dir.file("c.json"));
  EXPECT_EQ(testing::read_file(dir.file("b.json")), testing::read_file(dir.file("c.json")));
}

TEST(Baseline, SiteKeysIgnoreLinesDirectoriesAndIndentation) {
  EXPECT_EQ(analysis::site_key("side_effect", "TCB0001", "/home/a/repo/model.py", "    print(x)  ", ""),
            analysis::site_key("side_effect", "TCB0001", "model.py", "print(x)", ""));
  EXPECT_EQ(analysis::normalise_source("  if x > 0:  # known break"), "if x > 0:");
  EXPECT_EQ(analysis::normalise_source("print(\"#1\", 'a#b')  # note"), "print(\"#1\", 'a#b')");
  EXPECT_NE(analysis::site_key("side_effect", "TCB0001", "model.py", "print(x)", "a"),
            analysis::site_key("side_effect", "TCB0001", "model.py", "print(x)", "b"));
  EXPECT_EQ(analysis::normalise_frame_name("forward (resume after /x/y/model.py:72)"), "forward (resume after model.py)");
  EXPECT_EQ(analysis::normalise_frame_name("forward (resume after model.py:7, branch taken)"),
            "forward (resume after model.py, branch taken)");
}

TEST(Baseline, RecordedFromARunStoresFileNamesOnly) {
  TempDir dir;
  std::string path = testing::write_base_baseline(dir);
  ASSERT_FALSE(path.empty());
  auto j = nlohmann::json::parse(testing::read_file(path));
  EXPECT_EQ(j["tcprof_baseline"], 1);
  EXPECT_EQ(j["model"], "gate_base.pt");
  EXPECT_EQ(j["workload"]["iters"], 4);
  ASSERT_EQ(j["frames"].size(), 2u);
  EXPECT_EQ(j["frames"][0]["frame"], "forward");
  const auto& site = j["frames"][0]["breaks"][0];
  EXPECT_EQ(site["file"], "gate_variants.py");
  EXPECT_EQ(site["line"], 17);
  EXPECT_EQ(site["id"], "TCB0004");
  EXPECT_EQ(site["source"], "if y.sum() > 0:");
  EXPECT_EQ(j["totals"]["graph_breaks"], 1);
}

void expect_input_error(const std::string& content, const std::string& expected_words) {
  TempDir dir;
  std::ofstream(dir.file("b.json")) << content;
  try {
    cli::load_baseline(dir.file("b.json"));
    ADD_FAILURE() << "no error for " << content;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find(expected_words), std::string::npos) << e.what();
  }
}

TEST(Baseline, MalformedFilesAreInputErrors) {
  expect_input_error("{not json", "not valid JSON");
  expect_input_error("[]", "expected a JSON object");
  expect_input_error("{\"frames\": []}", "tcprof_baseline");
  expect_input_error("{\"tcprof_baseline\": 1}", "\"frames\"");
  expect_input_error("{\"tcprof_baseline\": 1, \"frames\": [{\"frame\": \"forward\"}]}", "frames[0] needs \"graphs\"");
  expect_input_error("{\"tcprof_baseline\": 99, \"frames\": []}", "version 99");
  try {
    cli::load_baseline("/nonexistent/baseline.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos);
  }
}

}  // namespace
}  // namespace tcprof
