// Identical perf hints are one finding: a backward graph's batch norms all point at the same line
// of torch's functional.py. The report, the problems list and the GUI show them once, counted.
#include <gtest/gtest.h>

#include "analysis/hint_groups.h"

namespace tcprof::analysis {
namespace {

PerfHintRow hint(const std::string& op, const std::string& file, int line, const std::string& message = "runs as a LibTorch call") {
  PerfHintRow h;
  h.kind = "fallback_op";
  h.op = op;
  h.file = file;
  h.line = line;
  h.message = op + " " + message;
  return h;
}

TEST(PerfHintGroups, IdenticalHintsAreOneGroupMostFrequentFirst) {
  std::vector<PerfHintRow> hints = {hint("aten::topk", "model.py", 3), hint("aten::sum", "functional.py", 2450),
                                    hint("aten::sum", "functional.py", 2450), hint("aten::sum", "functional.py", 2451),
                                    hint("aten::sum", "functional.py", 2450), hint("aten::topk", "model.py", 3),
                                    hint("aten::sum", "functional.py", 2450, "other reason")};
  auto groups = group_perf_hints(hints);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].op, "aten::sum");
  EXPECT_EQ(groups[0].line, 2450);
  EXPECT_EQ(groups[0].count, 3);
  EXPECT_EQ(groups[1].op, "aten::topk");  // 2, recorded first among the rest
  EXPECT_EQ(groups[1].count, 2);
  EXPECT_EQ(groups[2].line, 2451);  // another line is another place
  EXPECT_EQ(groups[3].message, "aten::sum other reason");  // another reason is another finding
  EXPECT_TRUE(group_perf_hints({}).empty());
}

}  // namespace
}  // namespace tcprof::analysis
