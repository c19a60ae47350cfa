// `tcprof --bash-completion` (installed as bash completion): completing in a real bash offers the
// subcommands, each subcommand's own flags, and file names after a flag that takes a value.
#include <gtest/gtest.h>

#include "tests/test_support.h"

using tcprof::testing::run_command;
using tcprof::testing::TempDir;

namespace {

// What bash offers for the words typed so far (the last one being completed).
std::string complete(const std::string& words) {
  std::string script = "source <(" + std::string(TCPROF_BIN) + " --bash-completion); COMP_WORDS=(" + words +
                       "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _tcprof; echo \"${COMPREPLY[*]}\"";
  auto r = run_command("bash -c '" + tcprof::testing::replace_all(script, "'", "'\\''") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

}  // namespace

TEST(BashCompletion, OffersSubcommandsAndEachOnesFlags) {
  EXPECT_EQ(complete("tcprof r"), "run report\n");
  EXPECT_EQ(complete("tcprof run --ver"), "--verify\n");
  EXPECT_EQ(complete("tcprof check --for"), "--format\n");
  EXPECT_EQ(complete("tcprof report --ver"), "\n");  // --verify is run's, not report's
}

TEST(BashCompletion, CompletesFileNamesAfterAFlagThatTakesOne) {
  TempDir dir;
  std::string db = dir.file("history.db");
  tcprof::testing::run_command("touch " + db);
  EXPECT_EQ(complete("tcprof run model.pt --db " + dir.file("hist")), db + "\n");
}
