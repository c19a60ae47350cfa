// `tcprof train` on the small GPT: the loss falls, every step is recorded, and a varying sequence
// length records its recompile.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/recompiles.h"
#include "core/run_reader.h"
#include "tests/gates/gates_support.h"

namespace tcprof {
namespace {

using testing::sample_model;
using testing::TempDir;
using testing::tcprof;

const std::string kGpt = " --input 'i64[2,16](0,512)' --target 'i64[2,16](0,512)' --loss cross_entropy ";

TEST(TrainCommand, LossFallsAndStepsAreRecorded) {
  TempDir dir;
  std::string db = dir.file("train.db");
  auto r = tcprof("train " + sample_model("gpt_tiny") + kGpt + "--optimizer adam --lr 0.01 --steps 16 --batches 2 --json --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_LT(j["loss_last"].get<double>(), 0.8 * j["loss_first"].get<double>()) << r.output;
  EXPECT_EQ(j["calls"], 16);
  EXPECT_EQ(j["recompiles"], 0);
  EXPECT_NE(j["note"].get<std::string>().find("eager backend"), std::string::npos);
  RunReader reader(db);
  auto run = reader.runs().at(0);
  EXPECT_EQ(run.command, "train");
  auto steps = reader.steps(run.id);
  ASSERT_EQ(steps.size(), 16u);
  for (const auto& s : steps) {
    EXPECT_TRUE(s.loss.has_value());
    EXPECT_GT(s.duration_ns, 0);
  }
  EXPECT_EQ(steps.front().loss, j["loss_first"].get<double>());
  EXPECT_EQ(reader.counts(run.id).calls, 16);
}

TEST(TrainCommand, MseWithSgdOnTheCnn) {
  TempDir dir;
  auto r = tcprof("train " + sample_model("cnn") + " --input 'f32[4,3,32,32]' --target 'f32[4,10]' --loss mse "
                  "--optimizer sgd --lr 0.05 --steps 12 --batches 1 --json --db " + dir.file("cnn.db"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_LT(j["loss_last"].get<double>(), j["loss_first"].get<double>()) << r.output;
}

TEST(TrainCommand, VaryingLengthRecordsItsRecompile) {
  TempDir dir;
  std::string db = dir.file("vary.db");
  auto r = tcprof("train " + sample_model("gpt_tiny") + kGpt + "--optimizer sgd --lr 0.1 --steps 12 --vary 0:1=16..256 --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 recompile"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("note: graphs that need autograd run on the eager backend"), std::string::npos);
  RunReader reader(db);
  Id run = reader.runs().at(0).id;
  // The first length compiles, the second recompiles with the length dynamic, then none
  // (automatic dynamic shapes).
  auto recompiles = analysis::recompiles_with_failures(reader, run);
  ASSERT_EQ(recompiles.size(), 1u);
  ASSERT_FALSE(recompiles[0].failures.empty());
  EXPECT_NE(recompiles[0].failures[0].message.find("size mismatch at index 1"), std::string::npos);
  EXPECT_EQ(reader.steps(run).size(), 12u);
}

TEST(TrainCommand, BadOptionsAreUsageErrors) {
  TempDir dir;
  std::string base = "train " + sample_model("gpt_tiny") + " --input 'i64[2,16](0,512)' --db " + dir.file("x.db");
  EXPECT_EQ(tcprof(base + " --target 'i64[2,16](0,512)' --loss hinge", true).exit_code, 2);
  EXPECT_EQ(tcprof(base + " --target 'i64[2,16](0,512)' --optimizer lbfgs", true).exit_code, 2);
  auto rank = tcprof(base + " --target 'i64[2](0,512)' --loss cross_entropy 2>&1");
  EXPECT_EQ(rank.exit_code, 2) << rank.output;
  EXPECT_NE(rank.output.find("one dimension fewer"), std::string::npos) << rank.output;
}

}  // namespace
}  // namespace tcprof
