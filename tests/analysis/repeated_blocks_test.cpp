// Blocks repeated inside one Dynamo graph: found from the FX code's op lines whatever the
// variables are called, named from the parameters the copies read, and not found where nothing
// repeats back to back. The PyTorch 2.15 `regional` fixture is in import_torch215_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include "analysis/repeated_blocks.h"

namespace tcprof::analysis {
namespace {

// FX code as `dynamo_output_graph` prints it: `blocks` transformer-like blocks of a layer norm, a
// linear and a residual add, between an embedding and a head.
std::string fx_graph(int blocks, const std::string& container = "blocks") {
  std::string code =
      "class GraphModule(torch.nn.Module):\n"
      "    def forward(self, L_idx_: \"i64[2, 8][8, 1]cpu\"):\n"
      "        l_idx_ = L_idx_\n"
      "        l_self_modules_wte_parameters_weight_ = L_self_modules_wte_parameters_weight_\n"
      "        x: \"f32[2, 8, 16][128, 16, 1]cpu\" = torch.nn.functional.embedding(l_idx_, "
      "l_self_modules_wte_parameters_weight_);  l_idx_ = None\n";
  std::string prev = "x";
  for (int b = 0; b < blocks; ++b) {
    const std::string p = "l_self_modules_" + container + "_modules_" + std::to_string(b) + "_modules_";
    const std::string n = std::to_string(b);
    code += "        # File: /m.py:" + std::to_string(20) + " in forward, code: x = x + self.fc(self.ln(x))\n";
    code += "        ln_" + n + ": \"f32[2, 8, 16][128, 16, 1]cpu\" = torch.nn.functional.layer_norm(" + prev +
            ", (16,), " + p + "ln_parameters_weight_, " + p + "ln_parameters_bias_, 1e-05);  " + p +
            "ln_parameters_weight_ = None\n";
    code += "        fc_" + n + ": \"f32[2, 8, 16][128, 16, 1]cpu\" = torch._C._nn.linear(ln_" + n + ", " + p +
            "fc_parameters_weight_, " + p + "fc_parameters_bias_);  ln_" + n + " = None\n";
    code += "        gelu_" + n + ": \"f32[2, 8, 16][128, 16, 1]cpu\" = torch._C._nn.gelu(fc_" + n + ");  fc_" + n +
            " = None\n";
    // A method call on a variable: FX prints `gelu_3.view(2, 8, 16)`.
    code += "        view_" + n + ": \"f32[2, 8, 16][128, 16, 1]cpu\" = gelu_" + n + ".view(2, 8, 16);  gelu_" + n +
            " = None\n";
    code += "        x_" + n + ": \"f32[2, 8, 16][128, 16, 1]cpu\" = " + prev + " + view_" + n + ";  " + prev +
            " = view_" + n + " = None\n";
    prev = "x_" + n;
  }
  code += "        logits: \"f32[2, 8, 100][800, 100, 1]cpu\" = torch._C._nn.linear(" + prev +
          ", l_self_modules_head_parameters_weight_, None)\n";
  code += "        return (logits,)\n";
  return code;
}

TEST(RepeatedBlocks, TwelveBlocksAreOneRepeatNamedByTheirModules) {
  const BlockRepeat r = find_block_repeat(fx_graph(12));
  EXPECT_EQ(r.copies, 12);
  EXPECT_EQ(r.ops_per_copy, 5);
  EXPECT_EQ(r.graph_ops, 12 * 5 + 2);  // the embedding and the head are ops too; aliases are not
  EXPECT_EQ(r.first_op, 1);
  EXPECT_EQ(r.name, "blocks.0-11");
}

TEST(RepeatedBlocks, ChildrenOfTheCompiledModuleAreNamedAsModules) {
  // torch.compile(nn.Sequential(...)) names its children `l_fn_modules_0_...`.
  std::string code = fx_graph(3);
  for (size_t at; (at = code.find("l_self_modules_blocks_modules_")) != std::string::npos;) {
    code.replace(at, std::string("l_self_modules_blocks_modules_").size(), "l_fn_modules_");
  }
  const BlockRepeat r = find_block_repeat(code);
  EXPECT_EQ(r.copies, 3);
  EXPECT_EQ(r.name, "modules 0-2");
}

TEST(RepeatedBlocks, NothingRepeatsInAGraphWithoutCopies) {
  EXPECT_EQ(find_block_repeat(fx_graph(1)).copies, 0);
  // tcprof's own IR has no FX op lines.
  EXPECT_EQ(find_block_repeat("graph(%0 x):\n  %1 = aten::relu(%0)\n  %2 = aten::relu(%1)\n"
                              "  %3 = aten::relu(%2)\n  %4 = aten::relu(%3)\n  %5 = aten::relu(%4)\n"
                              "  %6 = aten::relu(%5)\n").copies,
            0);
  EXPECT_EQ(find_block_repeat("").copies, 0);
  // A block whose ops differ in a shape is not a copy.
  std::string code = fx_graph(2);
  const size_t second = code.find("torch._C._nn.linear(ln_1");
  code.replace(code.rfind("f32[2, 8, 16]", second), 13, "f32[2, 8, 32]");
  EXPECT_EQ(find_block_repeat(code).copies, 0);
}

TEST(RepeatedBlocks, OnlyTheOuterForwardCountsAndARegionalGraphIsLeftAlone) {
  // A nested GraphModule (a higher-order op's body) printed before the outer forward, with a
  // repeat of its own: not the graph's ops.
  std::string nested = "class GraphModule(torch.nn.Module):\n    class subgraph_0(torch.nn.Module):\n"
                       "        def forward(self, a):\n";
  for (int i = 0; i < 8; ++i) {
    nested += "            r" + std::to_string(i) + ": \"f32[4]\" = torch.relu(a)\n";
    nested += "            s" + std::to_string(i) + ": \"f32[4]\" = torch.sigmoid(r" + std::to_string(i) + ")\n";
    nested += "            t" + std::to_string(i) + ": \"f32[4]\" = torch.tanh(s" + std::to_string(i) + ")\n";
  }
  const std::string outer = "    def forward(self, L_x_: \"f32[4]\"):\n        l_x_ = L_x_\n"
                            "        y: \"f32[4]\" = torch.exp(l_x_)\n        return (y,)\n";
  const BlockRepeat r = find_block_repeat(nested + outer);
  EXPECT_EQ(r.copies, 0);
  EXPECT_EQ(r.graph_ops, 1);
  // Blocks already compiled once and called as a subgraph (torch.compiler.nested_compile_region).
  std::string regional = "class GraphModule(torch.nn.Module):\n    def forward(self, L_x_: \"f32[4]\"):\n";
  std::string prev = "L_x_";
  for (int i = 0; i < 6; ++i) {
    const std::string n = std::to_string(i);
    regional += "        invoke_subgraph_" + n + " = torch.ops.higher_order.invoke_subgraph(self.subgraph_0, "
                "'subgraph_0', " + prev + ")\n";
    regional += "        getitem_" + n + ": \"f32[4]\" = invoke_subgraph_" + n + "[0];  invoke_subgraph_" + n + " = None\n";
    regional += "        add_" + n + ": \"f32[4]\" = getitem_" + n + " + 1\n";
    prev = "add_" + n;
  }
  EXPECT_EQ(find_block_repeat(regional).copies, 0);
}

TEST(RepeatedBlocks, CopiesReadingNoParametersAreFoundButNotNamed) {
  std::string code = "    def forward(self, L_x_):\n        l_x_ = L_x_\n";
  std::string prev = "l_x_";
  for (int b = 0; b < 5; ++b) {
    const std::string n = std::to_string(b);
    code += "        a" + n + ": \"f32[4]\" = torch.relu(" + prev + ")\n";
    code += "        b" + n + ": \"f32[4]\" = a" + n + " * 2\n";
    code += "        c" + n + ": \"f32[4]\" = torch.sigmoid(b" + n + ")\n";
    prev = "c" + n;
  }
  const BlockRepeat r = find_block_repeat(code);
  EXPECT_EQ(r.copies, 5);
  EXPECT_EQ(r.ops_per_copy, 3);
  EXPECT_EQ(r.name, "");
  // With a longer minimum, two copies of two blocks are the repeat; longer than half the graph, none.
  EXPECT_EQ(find_block_repeat(code, 4).copies, 2);
  EXPECT_EQ(find_block_repeat(code, 4).ops_per_copy, 6);
  EXPECT_EQ(find_block_repeat(code, 8).copies, 0);
}

}  // namespace
}  // namespace tcprof::analysis
