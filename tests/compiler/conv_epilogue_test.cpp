// A convolution's ReLU and residual add inside cuDNN's call (TCPROF_CUDA_CONV_EPILOGUES=1): which
// convolutions the pass takes, the program's outputs against eager in emulation, and the operator
// against the convolution, add and ReLU one by one (on a GPU: cuDNN's fused call).
#include <cstdlib>
#include <string>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include "compiler/backends/cuda/conv_epilogue.h"
#include "core/error.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::expect_compiled_matches_eager;
using testing::inputs_for;
using testing::strict_cuda;


// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

// A ResNet-like stretch: conv+bias+ReLU, conv+residual add+ReLU (the add's operands either way
// round), a strided conv without ReLU, and a conv whose output is read twice: the first two and the
// swapped add fuse, the last two stay convolutions.
const char* kBlock =
    "def forward(self, x, w1, b1, w2, w3, b3):\n"
    "  h = torch.relu(torch.conv2d(x, w1, b1, [1, 1], [1, 1]))\n"
    "  y = torch.relu(torch.conv2d(h, w2, None, [1, 1], [1, 1]) + h)\n"
    "  u = torch.relu(y + torch.conv2d(y, w2, None, [1, 1], [1, 1]))\n"
    "  d = torch.conv2d(u, w3, b3, [2, 2], [0, 0])\n"
    "  k = torch.conv2d(u, w2, None, [1, 1], [1, 1])\n"
    "  return d, torch.relu(k) + k\n";

std::vector<std::string> block_inputs(const std::string& batch) {
  return {"f32[" + batch + ",8,10,10]", "f32[8,8,3,3]", "f32[8]", "f32[8,8,3,3]", "f32[6,8,1,1]", "f32[6]"};
}

TEST(ConvEpilogue, ConvolutionsWithTheirReluJoinCudnnsCallWhenAskedFor) {
  at::NoGradGuard no_grad;
  testing::TempDir dir;
  const std::string path = testing::save_scripted(kBlock, dir.file("conv_block.pt"));
  {
    ScopedEnv on("TCPROF_CUDA_CONV_EPILOGUES", "1");
    CompiledModule m(load_model(path), strict_cuda(), nullptr);
    for (const std::string batch : {"2", "3"}) {
      SCOPED_TRACE(batch);
      expect_compiled_matches_eager(m, inputs_for(block_inputs(batch)));
    }
    testing::Totals r = testing::totals(m);
    EXPECT_EQ(testing::occurrences(r.ir, "tcprof::conv_relu("), 6u) << r.ir;  // three in each graph (one a batch size)
    EXPECT_EQ(testing::occurrences(r.ir, "aten::conv2d("), 4u) << r.ir;       // no ReLU; read twice
    int groups = 0;
    for (const auto& f : m.frames()) {
      for (const auto& e : f->entries) {
        for (const auto& k : e->compiled->report().kernel_groups) groups += k.rfind("conv_add_relu (cuDNN epilogue)", 0) == 0;
      }
    }
    EXPECT_EQ(groups, 4);
  }
  {
    // An in-place write to the convolution's input before its ReLU: fusing would move the
    // convolution past it, so the graph is left as it is.
    ScopedEnv on("TCPROF_CUDA_CONV_EPILOGUES", "1");
    const std::string in_place = testing::save_scripted(
        "def forward(self, x, w1, b1, w2, w3, b3):\n"
        "  a = torch.relu(x)\n"
        "  h = torch.conv2d(a, w1, b1, [1, 1], [1, 1])\n"
        "  a.mul_(2.0)\n"
        "  return torch.relu(h), a * 1.0\n",
        dir.file("conv_in_place.pt"));
    CompiledModule m(load_model(in_place), strict_cuda(), nullptr);
    expect_compiled_matches_eager(m, inputs_for(block_inputs("2")));
    EXPECT_EQ(testing::occurrences(testing::totals(m).ir, "tcprof::conv_relu("), 0u) << testing::totals(m).ir;
  }
  // Off by default: the generated kernels take the ReLUs.
  CompiledModule plain(load_model(path), strict_cuda(), nullptr);
  expect_compiled_matches_eager(plain, inputs_for(block_inputs("2")));
  EXPECT_EQ(testing::occurrences(testing::totals(plain).ir, "tcprof::conv_relu("), 0u);
  ScopedEnv bad("TCPROF_CUDA_CONV_EPILOGUES", "yes");
  EXPECT_THROW(conv_epilogues_from_env(), Error);
}

TEST(ConvEpilogue, TheOperatorIsTheConvolutionThenTheAddThenTheRelu) {
  at::NoGradGuard no_grad;
  at::manual_seed(3);
  std::vector<c10::Device> devices{c10::kCPU};
  if (torch::cuda::is_available()) devices.emplace_back(c10::kCUDA, 0);
  for (const c10::Device device : devices) {
    auto o = at::TensorOptions().device(device);
    const at::Tensor x = at::randn({2, 4, 9, 9}, o), w = at::randn({6, 2, 3, 3}, o), b = at::randn({6}, o);
    const at::Tensor reference = at::relu(at::conv2d(x, w, b, {2, 2}, {1, 1}, {1, 1}, 2));
    const at::Tensor z = at::randn_like(reference);
    const at::Tensor with_z = at::relu(at::conv2d(x, w, b, {2, 2}, {1, 1}, {1, 1}, 2) + z);
    const at::Tensor no_bias = at::relu(at::conv2d(x, w, {}, {2, 2}, {1, 1}, {1, 1}, 2) + z);
    // On the CPU the same ops; on a GPU cuDNN's fused call (TF32 where LibTorch allows it, as eager's).
    const double tolerance = device.is_cuda() ? 1e-2 : 0;
    auto expect_near = [&](const at::Tensor& got, const at::Tensor& want, const char* what) {
      const double diff = (got - want).abs().max().item<double>();
      EXPECT_LE(diff, tolerance * (want.abs().max().item<double>() + 1)) << what << " on " << device;
      EXPECT_EQ(got.sizes(), want.sizes());
    };
    expect_near(conv_relu(x, w, b, {}, {2, 2}, {1, 1}, {1, 1}, 2), reference, "bias, no residual");
    expect_near(conv_relu(x, w, b, z, {2, 2}, {1, 1}, {1, 1}, 2), with_z, "bias and residual");
    expect_near(conv_relu(x, w, {}, z, {2, 2}, {1, 1}, {1, 1}, 2), no_bias, "residual, no bias");
  }
}

}  // namespace
}  // namespace tcprof
