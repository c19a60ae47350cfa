// The gate's machine formats: JSON for scripts, JUnit XML (must parse), GitHub annotations.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/gates/gates_support.h"
#include "tests/gates/xml_check.h"

namespace tcprof {
namespace {

using testing::sample_model;
using testing::TempDir;
using testing::tcprof;

std::string check_print(const TempDir& dir, const std::string& baseline, const std::string& format) {
  return "check " + sample_model("gate_print") + " --input 'f32[4,8]' --iters 4 --baseline " + baseline +
         " --format " + format + " --db " + dir.file(format + ".db") + " 2>/dev/null";
}

TEST(CheckFormats, JsonNamesVerdictFindingsAndFrames) {
  TempDir dir;
  std::string baseline = testing::write_base_baseline(dir);
  auto r = tcprof(check_print(dir, baseline, "json"));
  EXPECT_EQ(r.exit_code, 1);
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["verdict"], "regression");
  EXPECT_EQ(j["regressions"], 1);
  const auto& f = j["findings"][0];
  EXPECT_EQ(f["kind"], "new_graph_break");
  EXPECT_EQ(f["line"], 25);
  EXPECT_EQ(f["source"], "print(\"debug\", y.shape)");
  EXPECT_FALSE(f["hint"].get<std::string>().empty());
  EXPECT_EQ(j["frames"].size(), 3u);
  // Improvements carry the update command.
  auto fixed = tcprof("check " + sample_model("gate_fixed") + " --input 'f32[4,8]' --iters 4 --baseline " + baseline +
                      " --json --db " + dir.file("fixed.db"));
  EXPECT_EQ(fixed.exit_code, 0);
  auto jf = nlohmann::json::parse(fixed.output);
  EXPECT_EQ(jf["verdict"], "improved");
  EXPECT_NE(jf["update_command"].get<std::string>().find("--update-baseline"), std::string::npos);
}

TEST(CheckFormats, JunitParsesAsXmlWithOneTestcasePerFrame) {
  TempDir dir;
  std::string baseline = testing::write_base_baseline(dir);
  auto r = tcprof(check_print(dir, baseline, "junit"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(testing::xml_error(r.output), "") << r.output;
  std::regex testcase("<testcase ");
  auto cases = std::distance(std::sregex_iterator(r.output.begin(), r.output.end(), testcase), std::sregex_iterator());
  EXPECT_EQ(cases, 3) << r.output;
  EXPECT_NE(r.output.find("failures=\"1\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("<failure type=\"new_graph_break\" message=\"new graph break TCB0001 side_effect at "),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| print(&quot;debug&quot;, y.shape)"), std::string::npos) << r.output;
  // A passing run is valid XML too.
  auto pass = tcprof("check " + sample_model("gate_base") + " --input 'f32[4,8]' --iters 4 --baseline " + baseline +
                     " --format junit --db " + dir.file("pass.db"));
  EXPECT_EQ(pass.exit_code, 0);
  EXPECT_EQ(testing::xml_error(pass.output), "") << pass.output;
  EXPECT_EQ(pass.output.find("<failure"), std::string::npos);
}

TEST(CheckFormats, XmlCheckerRejectsBrokenDocuments) {
  EXPECT_EQ(testing::xml_error("<a><b x=\"1\"/>t &amp; u</a>"), "");
  EXPECT_NE(testing::xml_error("<a><b></a>"), "");
  EXPECT_NE(testing::xml_error("<a x=1></a>"), "");
  EXPECT_NE(testing::xml_error("<a>x < y</a>"), "");
  EXPECT_NE(testing::xml_error("<a>&nbsp;</a>"), "");
  EXPECT_NE(testing::xml_error("<a></a><b></b>"), "");
}

TEST(CheckFormats, GithubAnnotatesTheLine) {
  TempDir dir;
  std::string baseline = testing::write_base_baseline(dir);
  auto r = tcprof(check_print(dir, baseline, "github"));
  EXPECT_EQ(r.exit_code, 1);
  std::regex error_line(R"(^::error file=[^,]*gate_variants\.py,line=25,title=tcprof%3A new graph break TCB0001 side_effect::new graph break TCB0001 side_effect: `print\("debug", y\.shape\)`\..*Hint: .*\(baseline 0, now 1\)$)");
  std::istringstream lines(r.output);
  int errors = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("::", 0) != 0) continue;
    EXPECT_TRUE(std::regex_match(line, error_line)) << line;
    ++errors;
  }
  EXPECT_EQ(errors, 1) << r.output;
  auto fixed = tcprof("check " + sample_model("gate_fixed") + " --input 'f32[4,8]' --iters 4 --baseline " + baseline +
                      " --format github --db " + dir.file("fixed.db"));
  EXPECT_EQ(fixed.exit_code, 0);
  EXPECT_NE(fixed.output.find("::notice title=tcprof%3A graph break removed%3A TCB0004"), std::string::npos)
      << fixed.output;
}

}  // namespace
}  // namespace tcprof
