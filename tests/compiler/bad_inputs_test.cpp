// Bad models and bad specs: one clear error, the right exit code, and nothing lost.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "compiler/runtime/compiled_module.h"
#include "core/error.h"
#include "core/run_reader.h"
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
      {"run " + gpt + " --input 'i64[2,8](0,512)' --device tpu", 2, "--device 'tpu': use cpu, cuda or cuda:N"},
      {"run " + gpt + " --input 'i64[2,8](0,512)' --device cuda:99", 2, "--device cuda:99: "},
      // Too large to allocate is the user's input error with its size, not an internal error.
      {"run " + gpt + " --input 'f32[4294967296,4294967296]'", 2, "is too large: generating it needs more than 2^64 bytes"},
      {"run " + gpt + " --input 'i64[40000000,4000](0,512)'", 2, "needs 2560000000000 bytes (2.3 TiB)"},
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

// A graph the C++ compiler cannot build runs eagerly, and the summary says so with the compiler's
// first line (it used to end "eager calls 0" as if all was well); --strict makes it exit 1.
TEST(BadModels, CompilerFailureIsReportedInTheRunSummaryAndExplain) {
  TempDir dir;
  std::string env = "TCPROF_CXX=/bin/false TCPROF_CACHE_DIR=" + dir.file("cache") + " ";
  std::string args = sample("gpt_tiny") + " --input 'i64[2,8](0,512)' --db none";
  auto run = run_command(env + TCPROF_BIN + " run " + args + " --iters 2 2>&1");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("1 graph failed to compile and runs eagerly (--strict makes this an error)"),
            std::string::npos) << run.output;
  EXPECT_NE(run.output.find("C++ compiler '/bin/false'"), std::string::npos) << run.output;
  auto json = run_command(env + TCPROF_BIN + " run " + args + " --iters 2 --json 2>/dev/null");
  EXPECT_NE(json.output.find("\"compile_failures\": 1"), std::string::npos) << json.output;
  auto explain = run_command(env + TCPROF_BIN + " explain " + args + " 2>&1");
  EXPECT_NE(explain.output.find("1 graph failed to compile"), std::string::npos) << explain.output;
  auto strict = run_command(env + TCPROF_BIN + " run " + args + " --strict 2>&1");
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
}

// SIGINT and SIGTERM mark the run interrupted and keep its calls; SIGKILL cannot be caught, so
// readers infer `interrupted` from the dead pid and show the last event's time.
TEST(BadModels, InterruptedRunsSayInterruptedWithTheirCalls) {
  TempDir dir;
  for (int sig : {SIGINT, SIGTERM, SIGKILL}) {
    std::string db = dir.file("k" + std::to_string(sig) + ".db");
    std::string command = std::string("exec ") + TCPROF_BIN + " run " + sample("gpt_tiny") +
                          " --input 'i64[2,8](0,512)' --iters 1000000 --db " + db + " >/dev/null 2>&1";
    std::string cache = dir.file("cache");
    // fork/exec rather than a shell's `&`: a shell's background job starts with SIGINT ignored.
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("TCPROF_CACHE_DIR", cache.c_str(), 1);
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ASSERT_GT(pid, 0);
    // Signal once the run has committed calls: a fixed delay fails on a loaded machine, where
    // loading and compiling can take longer than any guess.
    bool calls_recorded = false;
    for (int waited_ms = 0; !calls_recorded && waited_ms < 120000; waited_ms += 100) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      try {
        RunReader reader(db);
        auto runs = reader.runs();
        calls_recorded = !runs.empty() && reader.counts(runs[0].id).calls > 0;
      } catch (const Error&) {
        // not created yet
      }
    }
    EXPECT_TRUE(calls_recorded);
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (sig == SIGKILL) {
      EXPECT_TRUE(WIFSIGNALED(status)) << status;
    } else {
      ASSERT_TRUE(WIFEXITED(status)) << status;
      EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    }
    auto report = run_command(std::string(TCPROF_BIN) + " report --json " + db);
    ASSERT_EQ(report.exit_code, 0) << report.output;
    EXPECT_NE(report.output.find("\"status\": \"interrupted\""), std::string::npos) << sig << report.output;
    EXPECT_NE(report.output.find(std::string("\"status_inferred\": ") + (sig == SIGKILL ? "true" : "false")),
              std::string::npos) << sig << report.output;
    EXPECT_EQ(report.output.find("\"calls\": 0,"), std::string::npos) << sig << report.output;
    auto text = run_command(std::string(TCPROF_BIN) + " report " + db);
    EXPECT_NE(text.output.find(sig == SIGKILL ? "gone; last event 20" : "interrupted (at 20"), std::string::npos)
        << text.output;
  }
}

}  // namespace
}  // namespace tcprof
