// The kernel cache never loads a library whose bytes changed, refuses a folder others control,
// and a tcprof killed mid-compile leaves no compiler running and no temporary behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "compiler/toolchain/cache_files.h"
#include "compiler/toolchain/child_process.h"
#include "compiler/toolchain/kernel_library.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

const char* kAddSource = R"(extern "C" int add(int a, int b) { return a + b; })";

KernelLibraryOptions options_in(const TempDir& dir) {
  KernelLibraryOptions options;
  options.cache_dir = dir.file("cache");
  return options;
}

int call_add(const KernelLibraryResult& r) {
  return reinterpret_cast<int (*)(int, int)>(r.library->symbol("add"))(20, 22);
}

// A zeroed page of the same size passes every ELF header check and used to crash every later run
// (SIGSEGV in the kernel) until the cache was deleted by hand.
TEST(KernelCacheSafety, SameSizeCorruptionIsCaughtByTheContentHashAndRebuilt) {
  TempDir dir;
  std::string so;
  {
    KernelLibraryResult r = KernelLibraryBuilder(options_in(dir)).compile(kAddSource);
    so = r.library->path();
  }
  ASSERT_TRUE(fs::exists(hash_file_of(so)));
  EXPECT_EQ(library_hash_problem(so), "");
  auto size = fs::file_size(so);
  {
    // Zero 4 KiB in the middle of the file: .text on this toolchain, headers untouched.
    std::fstream f(so, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2 - 2048));
    std::string zeros(4096, '\0');
    f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  }
  ASSERT_EQ(fs::file_size(so), size);
  EXPECT_EQ(elf_problem(so), "");  // the old check could not see it
  EXPECT_NE(library_hash_problem(so).find("content hash mismatch"), std::string::npos);
  ::testing::internal::CaptureStderr();
  KernelLibraryResult r = KernelLibraryBuilder(options_in(dir)).compile(kAddSource);
  std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(r.cache_hit);
  EXPECT_EQ(call_add(r), 42);
  EXPECT_NE(said.find("is damaged (its bytes changed since it was built"), std::string::npos) << said;
  EXPECT_NE(said.find("rebuilding"), std::string::npos) << said;
  EXPECT_EQ(library_hash_problem(so), "");
}

TEST(KernelCacheSafety, ALibraryWithoutItsHashIsRebuiltNotTrusted) {
  TempDir dir;
  std::string so = KernelLibraryBuilder(options_in(dir)).compile(kAddSource).library->path();
  fs::remove(hash_file_of(so));
  ::testing::internal::CaptureStderr();
  KernelLibraryResult r = KernelLibraryBuilder(options_in(dir)).compile(kAddSource);
  ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(r.cache_hit);
  EXPECT_TRUE(fs::exists(hash_file_of(so)));
  EXPECT_TRUE(KernelLibraryBuilder(options_in(dir)).compile(kAddSource).cache_hit);
}

TEST(KernelCacheSafety, AFolderOthersCanWriteIsRefusedWithTheFix) {
  TempDir dir;
  fs::create_directories(dir.file("cache"));
  ::chmod(dir.file("cache").c_str(), 0777);
  try {
    KernelLibraryBuilder(options_in(dir)).compile(kAddSource);
    FAIL() << "expected a refusal";
  } catch (const KernelLibraryError& e) {
    FAIL() << "a refusal is the user's input error, not a compile failure: " << e.what();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    std::string what = e.what();
    EXPECT_NE(what.find("is writable by every user (mode 777)"), std::string::npos) << what;
    EXPECT_NE(what.find("TCPROF_CACHE_DIR"), std::string::npos) << what;
  }
  ::chmod(dir.file("cache").c_str(), 0700);
  EXPECT_EQ(call_add(KernelLibraryBuilder(options_in(dir)).compile(kAddSource)), 42);
}

pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;  // reaped: no process has this pid until the kernel reuses it
}

TEST(KernelCacheSafety, TemporariesOfKilledProcessesAreSweptAndLiveOnesKept) {
  TempDir dir;
  fs::create_directories(dir.file("cache/kernels/ab"));
  std::string dead = dir.file("cache/kernels/ab/x.so.tmp." + std::to_string(dead_pid()) + ".3");
  std::string live = dir.file("cache/kernels/ab/y.so.tmp." + std::to_string(::getppid()) + ".0");
  std::string other = dir.file("cache/kernels/ab/notes.txt");
  for (const auto& f : {dead, live, other}) std::ofstream(f) << "x";
  EXPECT_EQ(remove_stale_temporaries(dir.file("cache/kernels")), 1);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
}

bool process_running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// kill -9 of tcprof mid-compile: the guardian kills the compiler's whole process group and
// removes the half-written output.
TEST(KernelCacheSafety, AKilledParentTakesItsCompilerAndItsTemporaryWithIt) {
  TempDir dir;
  std::string pid_file = dir.file("compiler.pid");
  std::string output = dir.file("out.so.tmp.1.0");
  std::ofstream(output) << "half written";
  pid_t parent = ::fork();
  if (parent == 0) {
    ProcessOptions options;
    options.timeout_s = 60;
    options.remove_if_orphaned = output;
    run_process({"/bin/sh", "-c", "echo $$ > " + pid_file + "; exec sleep 60"}, options);
    ::_exit(0);
  }
  pid_t compiler = 0;
  for (int i = 0; i < 200 && compiler == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ifstream(pid_file) >> compiler;
  }
  ASSERT_GT(compiler, 0);
  EXPECT_TRUE(process_running(compiler));
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  for (int i = 0; i < 100 && process_running(compiler); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(process_running(compiler));
  EXPECT_FALSE(fs::exists(output));
}

TEST(KernelCacheSafety, ChildProcessReportsExitStatusOutputAndStartFailures) {
  ProcessOptions options;
  ProcessResult ok = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, options);
  EXPECT_EQ(ok.spawn_errno, 0);
  ASSERT_TRUE(WIFEXITED(ok.status));
  EXPECT_EQ(WEXITSTATUS(ok.status), 3);
  EXPECT_NE(ok.output.find("out"), std::string::npos);
  EXPECT_NE(ok.output.find("err"), std::string::npos);
  ProcessResult signalled = run_process({"/bin/sh", "-c", "kill -9 $$"}, options);
  ASSERT_TRUE(WIFSIGNALED(signalled.status));
  EXPECT_EQ(WTERMSIG(signalled.status), SIGKILL);
  ProcessResult missing = run_process({"/nonexistent/c++"}, options);
  EXPECT_EQ(missing.spawn_errno, ENOENT);
}

}  // namespace
}  // namespace tcprof
