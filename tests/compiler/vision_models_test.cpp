// torchvision classification models capture whole (zero breaks) and compile with the cpp
// backend: outputs equal to eager LibTorch within the documented tolerance.
#include <set>
#include <sstream>

#include <ATen/core/grad_mode.h>

#include "core/log.h"

#include "tests/compiler/compiler_test_support.h"

namespace tcprof {
namespace {

using testing::breaks_of;
using testing::expect_compiled_matches_eager;
using testing::expect_same_output;
using testing::graph_count;
using testing::inputs_for;
using testing::sample;

class VisionModels : public ::testing::TestWithParam<const char*> {};

TEST_P(VisionModels, ZeroBreaksOneGraphSameOutput) {
  at::NoGradGuard inference;  // parameters require grad: with grad mode on the graph would run eagerly
  CompileOptions options;
  options.strict = true;  // a compile failure fails the test
  CompiledModule m(load_model(sample(GetParam())), options, nullptr);
  auto in = inputs_for({"f32[1,3,224,224]"});
  set_log_mask(static_cast<uint32_t>(LogChannel::PerfHints));
  ::testing::internal::CaptureStderr();
  c10::IValue compiled = m.call(in);
  std::string hints = ::testing::internal::GetCapturedStderr();
  set_log_mask(0);
  expect_same_output(compiled, m.call_eager(in));
  // TCPROF_LOGS=perf_hints: each distinct hint once per graph (vit_b_16 repeated its attention
  // fallback 12 times, with the op name doubled).
  std::set<std::string> seen;
  std::istringstream lines(hints);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("[tcprof:perf_hints]", 0) != 0) continue;
    EXPECT_TRUE(seen.insert(line).second) << "repeated: " << line;
    size_t op = line.find("aten::");
    if (op != std::string::npos) {
      std::string name = line.substr(op, line.find(' ', op) - op);
      EXPECT_EQ(line.find(name + " " + name), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(breaks_of(m).empty());
  EXPECT_EQ(graph_count(m), 1);
  // The cached graph serves the next call.
  auto again = inputs_for({"f32[1,3,224,224]"}, 1);
  expect_compiled_matches_eager(m, again);
  EXPECT_EQ(m.stats().compiles, 1);
  const CompileReport& r = m.frames()[0]->entries[0]->compiled->report();
  // Compiled, not run op by op: generated kernels, or oneDNN chain steps with ops fused into them
  // (MobileNetV2 and EfficientNet-B0 are chains end to end, pools included).
  const int chain_steps = r.layout ? r.layout->convolutions : 0, chain_ops = r.layout ? r.layout->post_ops : 0;
  EXPECT_GT(r.kernels + r.window_kernels + chain_steps, 0);
  EXPECT_GT(r.fused_ops + chain_ops, 0);
}

INSTANTIATE_TEST_SUITE_P(Torchvision, VisionModels,
                         ::testing::Values("resnet18", "mobilenet_v2", "efficientnet_b0", "shufflenet_v2_x1_0",
                                           "squeezenet1_1", "convnext_tiny", "vit_b_16"));

}  // namespace
}  // namespace tcprof
