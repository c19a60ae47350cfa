// Break sites: the one key (no line number), grouping and counts.
#include <gtest/gtest.h>

#include "analysis/break_sites.h"

namespace tcprof::analysis {
namespace {

GraphBreakRow row(const char* file, int line, const char* source, const char* module_path = "",
                  const char* type = "side_effect", const char* id = "TCB0001") {
  GraphBreakRow r;
  r.type = type;
  r.break_id = id;
  r.op = "prim::Print";
  r.file = file;
  r.line = line;
  r.source = source;
  r.module_path = module_path;
  return r;
}

TEST(BreakSites, AMovedLineIsTheSameSiteAChangedLineIsNot) {
  EXPECT_EQ(site_key(row("/a/model.py", 17, "    if y.sum() > 0:")),
            site_key(row("/b/model.py", 45, "if y.sum() > 0:  # moved")));
  EXPECT_NE(site_key(row("model.py", 17, "if y.sum() > 0:")), site_key(row("model.py", 17, "if y.mean() > 0:")));
  EXPECT_NE(site_key(row("model.py", 17, "print(x)", "blocks.0")), site_key(row("model.py", 17, "print(x)", "blocks.1")));
  EXPECT_NE(site_key(row("model.py", 17, "print(x)")), site_key(row("other.py", 17, "print(x)")));
  EXPECT_NE(site_key(row("m.py", 1, "x.item()", "", "scalar_output", "TCB0003")), site_key(row("m.py", 1, "x.item()")));
}

TEST(BreakSites, GroupedMostFrequentFirstWithTheLastLocation) {
  auto sites = group_break_sites({row("m.py", 5, "print(a)"), row("m.py", 9, "print(b)"), row("m.py", 10, "print(b)"),
                                  row("m.py", 11, "  print(b)  # again")});
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].count, 3);
  EXPECT_EQ(sites[0].line, 11);
  EXPECT_EQ(sites[0].source, "print(b)");  // as first recorded
  EXPECT_EQ(sites[1].count, 1);
}

TEST(BreakSites, Normalisation) {
  EXPECT_EQ(normalise_source("  if x > 0:  # known break"), "if x > 0:");
  EXPECT_EQ(normalise_source("print(\"#1\", 'a#b')  # note"), "print(\"#1\", 'a#b')");
  EXPECT_EQ(normalise_source("a  =\t b"), "a = b");
  EXPECT_EQ(normalise_frame_name("forward (resume after /x/y/model.py:72)"), "forward (resume after model.py)");
  EXPECT_EQ(file_basename("/x/y/model.py"), "model.py");
  EXPECT_EQ(file_basename("model.py"), "model.py");
}

}  // namespace
}  // namespace tcprof::analysis
