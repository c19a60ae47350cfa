// The text formats inside TORCH_TRACE records: graph-break reasons (2.11 with registry ids, 2.6
// without), recompile reasons (a JSON list, or one bare string in 2.11) and C++ guard trees.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "importers/graph_break_text.h"
#include "importers/guard_text.h"

namespace tcprof::import {
namespace {

TEST(ImportText, GraphBreakFromPyTorch26HasNoRegistryId) {
  GraphBreakEvent e = parse_graph_break(
      "Graph break in user code at /tmp/m.py:7\n"
      "Reason: Unsupported: builtin: print [<class 'torch._dynamo.variables.constant.ConstantVariable'>] False\n"
      "User code traceback:\n"
      "  File \"/tmp/m.py\", line 7, in forward\n"
      "    print(\"hi\")\n");
  EXPECT_EQ(e.type, "side_effect");
  EXPECT_EQ(e.break_id, "");
  EXPECT_EQ(e.file, "/tmp/m.py");
  EXPECT_EQ(e.line, 7);
  EXPECT_EQ(e.source, "print(\"hi\")");
  EXPECT_NE(e.reason.find("Unsupported: builtin: print"), std::string::npos);
}

TEST(ImportText, BreakInsideALibraryPointsAtTheUsersFrame) {
  // Under DDP the break site is in torch; the user's own innermost frame is what to fix.
  GraphBreakEvent e = parse_graph_break(
      "Graph break in user code at /usr/lib/python3/dist-packages/torch/nn/parallel/distributed.py:1600\n"
      "Graph Break Reason: Unsupported context manager\n"
      "  Explanation: Dynamo does not know how to enter a `no_sync` context\n"
      "  Hint: Avoid it.\n"
      " For more details about this graph break, please visit: https://x/gb/gb0142.html\n\n"
      "User code traceback:\n"
      "  File \"/home/u/train.py\", line 40, in step\n"
      "    out = model(x)\n"
      "  File \"/usr/lib/python3/dist-packages/torch/nn/parallel/distributed.py\", line 1600, in forward\n"
      "    with self.no_sync():\n");
  EXPECT_EQ(e.break_id, "GB0142");
  EXPECT_EQ(e.type, "unsupported_op");
  EXPECT_EQ(e.file, "/home/u/train.py");
  EXPECT_EQ(e.line, 40);
  EXPECT_EQ(e.source, "out = model(x)");
  EXPECT_NE(e.reason.find("distributed.py:1600"), std::string::npos);
  auto stack = nlohmann::json::parse(e.stack_json);
  EXPECT_EQ(stack.size(), 2u);
}

TEST(ImportText, RecompileReasonsBareStringOrList) {
  auto one = parse_recompile_reasons("0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].compile_label, "0/0");
  EXPECT_EQ(one[0].expected, "4");
  EXPECT_EQ(one[0].actual, "8");
  auto two = parse_recompile_reasons(
      "[\n\"3/1: L['s'] == 1.5  # y = y * s  # proj/m.py:33 in f\\nUser stack trace:\\n  ...\",\n"
      "\"3/0: tensor 'y' size mismatch at index 0. expected 4, actual 12\"\n]");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].compile_label, "3/1");
  EXPECT_EQ(two[0].guard, "L['s'] == 1.5");
  EXPECT_EQ(two[0].expected, "1.5");
  EXPECT_EQ(two[0].file, "proj/m.py");
  EXPECT_EQ(two[0].line, 33);
  EXPECT_EQ(two[1].actual, "12");
}

TEST(ImportText, CppGuardTreeLeavesOnly) {
  auto leaves = parse_cpp_guards(
      "TREE_GUARD_MANAGER:\n"
      "+- RootGuardManager\n"
      "| +- DEFAULT_DEVICE: utils_device.CURRENT_DEVICE == None   # _dynamo/output_graph.py:951 in init_ambient_guards\n"
      "| +- GuardManager: source=L['x'], accessed_by=FrameLocalsGuardAccessor(key='x')\n"
      "| | +- TENSOR_MATCH: check_tensor(L['x'], size=[4, 64])  # return F.linear(x)  # nn/modules/linear.py:134 in forward\n");
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_EQ(leaves[0].kind, "default_device");
  EXPECT_EQ(leaves[1].kind, "tensor_match");
  EXPECT_EQ(leaves[1].expr, "check_tensor(L['x'], size=[4, 64])");
  EXPECT_EQ(leaves[1].file, "nn/modules/linear.py");
  EXPECT_EQ(leaves[1].line, 134);
}

}  // namespace
}  // namespace tcprof::import
