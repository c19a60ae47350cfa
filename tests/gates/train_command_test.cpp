// `tcprof train` on the small GPT: the loss falls, every step is recorded, and a varying sequence
// length records its recompile.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

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
  EXPECT_EQ(j["note"].get<std::string>(), "compiled forward and backward for 1 of 1 graph");
  RunReader reader(db);
  auto run = reader.runs().at(0);
  EXPECT_EQ(run.command, "train");
  auto steps = reader.steps(run.id);
  ASSERT_EQ(steps.size(), 16u);
  for (const auto& s : steps) {
    EXPECT_TRUE(s.loss.has_value());
    EXPECT_GT(s.duration_ns, 0);
    // The step split into forward (with the loss), backward and optimizer, within the step.
    EXPECT_GT(s.forward_ns, 0);
    EXPECT_GT(s.backward_ns, 0);
    EXPECT_GT(s.optimizer_ns, 0);
    EXPECT_LE(s.forward_ns + s.backward_ns + s.optimizer_ns, s.duration_ns);
  }
  EXPECT_EQ(steps.front().loss, j["loss_first"].get<double>());
  EXPECT_EQ(reader.counts(run.id).calls, 16);
  EXPECT_GT(j["ms_per_step_backward"].get<double>(), 0);
  EXPECT_GT(j["ms_per_step_forward"].get<double>(), 0);
  // Each step's backward pass and optimizer step are kernel rows of that step's call.
  std::set<Id> calls;
  for (const auto& c : reader.calls(run.id)) calls.insert(c.id);
  std::set<Id> backward_calls, optimizer_calls, compiled_backward_calls;
  for (const auto& k : reader.kernel_summaries(run.id)) {
    if (k.name == "backward (autograd)") backward_calls.insert(k.call_id);
    if (k.name.rfind("bwd ", 0) == 0) compiled_backward_calls.insert(k.call_id);  // the backward graph's kernels
    if (k.name.rfind("optimizer step", 0) == 0) optimizer_calls.insert(k.call_id);
  }
  EXPECT_EQ(backward_calls, calls);
  EXPECT_EQ(optimizer_calls, calls);
  compiled_backward_calls.insert(*calls.begin());  // the first call's result came from capture
  EXPECT_EQ(compiled_backward_calls, calls);
  auto report = tcprof("report " + db);
  EXPECT_NE(report.output.find("step phases (medians): forward"), std::string::npos) << report.output;
}

// A compiled training graph is one compile with three graph rows, as PyTorch's logs have a Dynamo
// graph and its AOT forward and backward: the captured graph (the one graphs count), then the
// forward and the backward graph, each with its own kernels; and the joint/partition phases. The
// optimizer step is a graph row of its own, outside any compile.
TEST(TrainCommand, EachCompileRecordsItsForwardAndBackwardGraphs) {
  TempDir dir;
  std::string db = dir.file("train.db");
  auto r = tcprof("train " + sample_model("gpt_tiny") + kGpt + "--optimizer adam --steps 3 --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  RunReader reader(db);
  Id run = reader.runs().at(0).id;
  auto all_graphs = reader.graphs(run);
  ASSERT_EQ(all_graphs.size(), 4u);
  // The optimizer step first, as a graph of its own: no compile, the fused kernel as its code.
  const GraphRow optimizer = all_graphs[0];
  EXPECT_EQ(optimizer.kind, "optimizer");
  EXPECT_EQ(optimizer.compile_id, 0);
  EXPECT_NE(optimizer.code.find("tcprof_adam_step"), std::string::npos);
  EXPECT_EQ(optimizer.ir.rfind("fused adam over ", 0), 0u) << optimizer.ir;
  std::vector<GraphRow> graphs(all_graphs.begin() + 1, all_graphs.end());
  EXPECT_EQ(graphs[0].kind, "captured");
  EXPECT_EQ(graphs[1].kind, "aot_forward");
  EXPECT_EQ(graphs[2].kind, "aot_backward");
  for (const auto& g : graphs) EXPECT_EQ(g.compile_id, graphs[0].compile_id);
  EXPECT_NE(graphs[2].code.find("extern \"C\""), std::string::npos) << "the backward's generated source";
  EXPECT_EQ(reader.counts(run).graphs, 1);
  std::map<Id, std::set<std::string>> kernels_of;
  for (const auto& k : reader.kernel_summaries(run)) kernels_of[k.graph_id].insert(k.name);
  ASSERT_FALSE(kernels_of[graphs[1].id].empty());
  ASSERT_FALSE(kernels_of[graphs[2].id].empty());
  for (const auto& name : kernels_of[graphs[2].id]) EXPECT_EQ(name.rfind("bwd ", 0), 0u) << name;
  for (const auto& name : kernels_of[graphs[1].id]) EXPECT_NE(name.rfind("bwd ", 0), 0u) << name;
  EXPECT_EQ(kernels_of[optimizer.id], std::set<std::string>{"optimizer step (fused adam)"});
  std::set<std::string> phases;
  for (const auto& p : reader.compile_phases(run)) phases.insert(p.phase);
  for (const char* p : {"capture", "joint", "partition", "codegen", "backward_codegen"}) EXPECT_TRUE(phases.count(p)) << p;
}

// bench --train: both steps from the same weights, their losses checked, then timed round-robin.
TEST(TrainCommand, BenchTrainTimesTheStepAndTheOptimizer) {
  auto r = tcprof("bench " + sample_model("gpt_tiny") + kGpt + "--train --iters 3 --warmup 1 --json --db none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_GT(j["eager_ms"].get<double>(), 0);
  EXPECT_GT(j["compiled_ms"].get<double>(), 0);
  EXPECT_GT(j["compile_s"].get<double>(), 0);
  EXPECT_EQ(j["optimizer"]["compiled"], "fused adam");
  EXPECT_EQ(j["optimizer"]["eager"], "torch::optim adam");
  EXPECT_GT(j["optimizer"]["speedup"].get<double>(), 0);
  // Each kernel that can take the step, timed alone on the same parameters: here the generated
  // one and torch::optim's (and LibTorch's fused CPU kernels where LibTorch has them).
  std::set<std::string> kernels;
  for (const auto& k : j["optimizer"]["kernels"]) {
    kernels.insert(k["name"].get<std::string>());
    EXPECT_GT(k["ms"].get<double>(), 0) << k.dump();
  }
  EXPECT_TRUE(kernels.count("fused adam") && kernels.count("torch::optim adam")) << j["optimizer"].dump();
  EXPECT_EQ(kernels.count("fused adam (tcprof CUDA)"), 0u) << "tcprof's CUDA kernel only for parameters on a GPU";
  EXPECT_EQ(j["note"], "compiled forward and backward for 1 of 1 graph");
  EXPECT_EQ(tcprof("bench " + sample_model("gpt_tiny") + kGpt + "--db none", true).exit_code, 2)
      << "--target without --train";
  EXPECT_EQ(tcprof("bench " + sample_model("gpt_tiny") + " --input 'i64[2,16](0,512)' --train --db none", true).exit_code, 2)
      << "--train without --target";
}

// explain --grad: what each training graph's backward keeps and recomputes.
TEST(TrainCommand, ExplainGradShowsWhatTheBackwardSavesAndRecomputes) {
  std::string base = "explain " + sample_model("gpt_tiny") + " --input 'i64[2,16](0,512)' --grad --db none";
  auto r = tcprof(base + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto t = nlohmann::json::parse(r.output)["graphs"][0]["training"];
  ASSERT_TRUE(t.is_object()) << r.output;
  EXPECT_GT(t["saved_bytes"].get<int64_t>(), 0);
  EXPECT_GT(t["saved_activations"].get<int>(), 0);
  EXPECT_GT(t["backward_kernels"].get<int>(), 0);
  EXPECT_GT(t["gradients"].get<int>(), 0);
  // Every GPT activation the backward reads feeds a GEMM there (weight gradients), so the partition
  // saves them all: recomputing one would cost a pass of its own (TrainingPartition tests the rule).
  EXPECT_TRUE(t["recomputed_ops"].is_array()) << t.dump();
  EXPECT_TRUE(t["recomputed_ops"].empty()) << t.dump();
  auto text = tcprof(base);
  EXPECT_NE(text.output.find("saved for backward: "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("recomputed in backward: nothing"), std::string::npos) << text.output;
  auto inference = tcprof("explain " + sample_model("gpt_tiny") + " --input 'i64[2,16](0,512)' --json --db none");
  EXPECT_TRUE(nlohmann::json::parse(inference.output)["graphs"][0]["training"].is_null());
}

// A model whose forward returns its loss (GPT with F.cross_entropy inside) trains with --loss model:
// no --target, the loss compiled into the training graph.
TEST(TrainCommand, LossModelTrainsAModelThatReturnsItsLoss) {
  TempDir dir;
  const std::string inputs = " --input 'i64[2,16](0,512)' --input 'i64[2,16](0,512)' ";
  auto r = tcprof("train " + sample_model("gpt_tiny_loss") + inputs +
                  "--loss model --optimizer adam --lr 0.01 --steps 12 --batches 2 --json --db " + dir.file("l.db"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_LT(j["loss_last"].get<double>(), 0.8 * j["loss_first"].get<double>()) << r.output;
  EXPECT_EQ(j["note"].get<std::string>(), "compiled forward and backward for 1 of 1 graph");
  std::string base = "train " + sample_model("gpt_tiny_loss") + inputs + "--steps 1 --db none ";
  auto with_target = tcprof(base + "--loss model --target 'i64[2,16](0,512)' 2>&1");
  EXPECT_EQ(with_target.exit_code, 2) << with_target.output;
  EXPECT_NE(with_target.output.find("--target is not used with --loss model"), std::string::npos) << with_target.output;
  auto no_target = tcprof(base + "--loss cross_entropy 2>&1");
  EXPECT_EQ(no_target.exit_code, 2) << no_target.output;
  EXPECT_NE(no_target.output.find("use --loss model when forward returns the loss"), std::string::npos) << no_target.output;
  auto not_a_loss = tcprof("train " + sample_model("gpt_tiny") + " --input 'i64[2,16](0,512)' --loss model --steps 1 --db none 2>&1");
  EXPECT_EQ(not_a_loss.exit_code, 2) << not_a_loss.output;
  EXPECT_NE(not_a_loss.output.find("must be its scalar loss; it is [2,16,512]"), std::string::npos) << not_a_loss.output;
}

// AdamW (decoupled weight decay) and SGD with momentum step through the fused kernel too.
TEST(TrainCommand, AdamWAndMomentumSgdAreFused) {
  TempDir dir;
  for (const std::string optimizer : {"--optimizer adamw --weight-decay 0.05", "--optimizer sgd --momentum 0.9"}) {
    auto r = tcprof("train " + sample_model("gpt_tiny") + kGpt + optimizer + " --lr 0.01 --steps 8 --batches 2 --json --db none");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = nlohmann::json::parse(r.output);
    EXPECT_EQ(j["optimizer_step"], optimizer.find("adamw") != std::string::npos ? "fused adamw" : "fused sgd");
    EXPECT_LT(j["loss_last"].get<double>(), j["loss_first"].get<double>()) << optimizer;
  }
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
  // The second length's graph has a dynamic dimension, which the compiled backward does not take.
  EXPECT_NE(r.output.find("compiled forward and backward for 1 of 2 graphs; graph runs eagerly: training and the "
                          "compiled backward does not cover it: dynamic shapes"), std::string::npos) << r.output;
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

// --amp bf16 on the CPU: the forward pass runs under autocast (the first loss moves by bf16
// rounding), the loss still falls step after step like the f32 run's (autocast's cache of bf16
// weight copies is cleared every step: a stale copy would freeze the forward pass), and an op
// with no bf16 kernel fails with one line saying so.
TEST(TrainCommand, Bf16AutocastTrainsLikeF32WithinRounding) {
  TempDir dir;
  std::string base = "train " + sample_model("gpt_tiny") + kGpt + "--optimizer adam --lr 0.01 --steps 12 --batches 2 --json";
  auto f32 = tcprof(base + " --db " + dir.file("f32.db"));
  auto bf16 = tcprof(base + " --amp bf16 --db " + dir.file("bf16.db"));
  ASSERT_EQ(f32.exit_code, 0) << f32.output;
  ASSERT_EQ(bf16.exit_code, 0) << bf16.output;
  auto a = nlohmann::json::parse(f32.output), b = nlohmann::json::parse(bf16.output);
  EXPECT_EQ(b["amp"], "bf16");
  double first_a = a["loss_first"].get<double>(), first_b = b["loss_first"].get<double>();
  double last_a = a["loss_last"].get<double>(), last_b = b["loss_last"].get<double>();
  EXPECT_NE(first_a, first_b) << "autocast changed nothing";
  EXPECT_NEAR(first_b, first_a, 0.01 * first_a);
  EXPECT_LT(last_b, 0.8 * first_b);
  EXPECT_NEAR(last_b, last_a, 0.05 * last_a);
  RunReader reader(dir.file("bf16.db"));
  EXPECT_NE(reader.runs().at(0).config_json.find("\"amp\":\"bf16\""), std::string::npos);

  auto no_bf16 = tcprof("train " + sample_model("cnn") + " --input 'f32[4,3,32,32]' --target 'f32[4,10]' --steps 2 "
                        "--amp bf16 --db " + dir.file("cnn.db") + " 2>&1");
  if (no_bf16.exit_code != 0) {  // LibTorch 1.13 has no bf16 hardshrink backward on the CPU; 2.x may
    EXPECT_EQ(no_bf16.exit_code, 2) << no_bf16.output;
    EXPECT_NE(no_bf16.output.find("train without --amp"), std::string::npos) << no_bf16.output;
  }
}

TEST(TrainCommand, BadOptionsAreUsageErrors) {
  TempDir dir;
  std::string base = "train " + sample_model("gpt_tiny") + " --input 'i64[2,16](0,512)' --db " + dir.file("x.db");
  EXPECT_EQ(tcprof(base + " --target 'i64[2,16](0,512)' --loss hinge", true).exit_code, 2);
  EXPECT_EQ(tcprof(base + " --target 'i64[2,16](0,512)' --optimizer lbfgs", true).exit_code, 2);
  EXPECT_EQ(tcprof(base + " --target 'i64[2,16](0,512)' --optimizer adam --momentum 0.9", true).exit_code, 2);
  EXPECT_EQ(tcprof(base + " --target 'i64[2,16](0,512)' --lr 0", true).exit_code, 2);
  EXPECT_EQ(tcprof(base + " --target 'i64[2,16](0,512)' --amp f16", true).exit_code, 2);
  auto rank = tcprof(base + " --target 'i64[2](0,512)' --loss cross_entropy 2>&1");
  EXPECT_EQ(rank.exit_code, 2) << rank.output;
  EXPECT_NE(rank.output.find("one dimension fewer"), std::string::npos) << rank.output;
}

}  // namespace
}  // namespace tcprof
