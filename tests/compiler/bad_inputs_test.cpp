// Bad models and bad specs: one clear error, the right exit code, and nothing lost.
#include <fstream>

#include "compiler/runtime/compiled_module.h"
#include "core/error.h"
#include "tests/compiler/compiler_test_support.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::run_command;
using testing::sample;
using testing::TempDir;

std::string load_error(const std::string& path, const std::string& method = "forward") {
  try {
    load_model(path, method);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(BadModels, MissingNotZipTruncatedAndUnknownMethod) {
  TempDir dir;
  EXPECT_NE(load_error(dir.file("none.pt")).find("does not exist"), std::string::npos);
  std::ofstream(dir.file("text.pt")) << "not a zip file at all";
  EXPECT_NE(load_error(dir.file("text.pt")).find("not a TorchScript archive"), std::string::npos);
  // The first half of a real archive.
  std::string whole = testing::read_file(sample("gpt_tiny"));
  std::ofstream(dir.file("cut.pt"), std::ios::binary) << whole.substr(0, whole.size() / 2);
  EXPECT_NE(load_error(dir.file("cut.pt")).find("could not be loaded"), std::string::npos);
  // A zip that is not TorchScript.
  EXPECT_NE(load_error(sample("gpt_tiny"), "generate").find("has no method 'generate'"), std::string::npos);
}

struct CliCase {
  std::string args;
  int exit_code;
  std::string message;
};

TEST(BadModels, CliExitCodesAndOneLineMessages) {
  TempDir dir;
  std::ofstream(dir.file("text.pt")) << "not a zip";
  std::string gpt = sample("gpt_tiny");
  std::vector<CliCase> cases = {
      {"explain " + dir.file("text.pt") + " --input 'f32[2]'", 2, "not a TorchScript archive"},
      {"explain " + gpt + " --input 'i64[2,8]' --input 'f32[2]'", 2, "takes 1 input (idx: Tensor) but 2 --input were given"},
      {"explain " + gpt + " --input 'int:3'", 2, "does not fit argument 'idx'"},
      {"explain " + gpt + " --input 'i64[2,8,4](0,512)'", 2, "'idx' has 3 dimensions, but the model unpacks its shape into 2 values"},
      {"explain " + gpt + " --input 'f32[2,8]'", 2, "failed"},
      {"explain " + gpt + " --input 'i64[2,8]' --method nope", 2, "has no method 'nope'"},
      {"explain " + gpt + " --input 'q64[2,8]'", 2, "unknown dtype 'q64'"},
      {"run " + gpt + " --input 'i64[2,8](0,512)' --stance sometimes", 2, "unknown stance"},
      {"run " + sample("print_in_forward") + " --input 'f32[4,8]' --fullgraph", 1, "TCB0001"},
      {"run " + sample("shape_guarded_branch") + " --input 'f32[4,3]' --vary 0:1=2..9 --iters 6 "
       "--stance fail_on_recompile", 1, "size mismatch at index 1"},
  };
  for (const auto& c : cases) {
    auto r = run_command(std::string(TCPROF_BIN) + " " + c.args + " --db " + dir.file("x.db") + " 2>&1 >/dev/null");
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("tcprof: error:", 0), 0u) << r.output;
  }
}

TEST(BadModels, FailedRunKeepsWhatWasRecorded) {
  TempDir dir;
  std::string db = dir.file("fail.db");
  auto r = run_command(std::string(TCPROF_BIN) + " run " + sample("shape_guarded_branch") +
                       " --input 'f32[4,3]' --vary 0:1=2..9 --iters 6 --stance fail_on_recompile --db " + db +
                       " 2>&1");
  EXPECT_EQ(r.exit_code, 1);
  auto report = run_command(std::string(TCPROF_BIN) + " report --json " + db);
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("\"status\": \"failed\""), std::string::npos);
  EXPECT_NE(report.output.find("\"compiles\": 1"), std::string::npos) << report.output;
}

}  // namespace
}  // namespace tcprof
