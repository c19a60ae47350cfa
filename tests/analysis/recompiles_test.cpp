// Recompile explanations: each recompile gets the failures of its own frame on the call that
// forced it, and its cause points at the first guard in user code.
#include <gtest/gtest.h>

#include "analysis/recompiles.h"

namespace tcprof::analysis {
namespace {

GuardFailureRow failure(Id call, Id compile, const char* expr, const char* file, int line) {
  GuardFailureRow f;
  f.call_id = call;
  f.compile_id = compile;
  f.guard_expr = expr;
  f.guard_file = file;
  f.guard_line = line;
  return f;
}

TEST(Recompiles, EachGetsItsOwnFramesFailures) {
  // Call 7 recompiled two frames: root (frame 1, entry 10) and a resume frame (frame 2, entry 20).
  RecompileRow root, resume;
  root.frame_id = 1;
  root.call_id = 7;
  root.reason = "size";
  resume.frame_id = 2;
  resume.call_id = 7;
  std::vector<CompileRow> compiles(2);
  compiles[0].id = 10;
  compiles[0].frame_id = 1;
  compiles[1].id = 20;
  compiles[1].frame_id = 2;
  auto rows = attach_guard_failures({root, resume},
                                    {failure(7, 10, "x.size(0) == 4", "m.py", 3),
                                     failure(7, 20, "v == 2", "", 0), failure(8, 10, "other call", "", 0)},
                                    compiles);
  ASSERT_EQ(rows[0].failures.size(), 1u);
  EXPECT_EQ(rows[0].failures[0].guard_expr, "x.size(0) == 4");
  ASSERT_EQ(rows[1].failures.size(), 1u);
  EXPECT_EQ(rows[1].failures[0].guard_expr, "v == 2");

  RecompileCause cause = recompile_cause(rows[0]);
  EXPECT_EQ(cause.file, "m.py");
  EXPECT_EQ(cause.line, 3);
  EXPECT_EQ(cause.reason, "guard x.size(0) == 4 failed: size");
  EXPECT_EQ(recompile_cause(rows[1]).file, "");  // no user line: the frame's own place is used
}

}  // namespace
}  // namespace tcprof::analysis
