#include "compiler/toolchain/kernel_library.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <thread>

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

// Files under `dir` whose name contains `part`.
std::vector<std::string> files_containing(const fs::path& dir, const std::string& part) {
  std::vector<std::string> found;
  if (!fs::exists(dir)) return found;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename().string().find(part) != std::string::npos) found.push_back(e.path());
  }
  return found;
}

void write_script(const std::string& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  fs::permissions(path, fs::perms::owner_all);
}

// A compiler that logs every real compile (not --version) to `log`, then runs the system c++.
std::string counting_compiler(const TempDir& dir) {
  std::string script = dir.file("counting-c++");
  write_script(script, "case \"$*\" in *--version*) ;; *) echo compile >> '" + dir.file("calls") +
                           "' ;; esac\nexec c++ \"$@\"\n");
  return script;
}

int compile_count(const TempDir& dir) {
  std::ifstream in(dir.file("calls"));
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

int mode_of(const fs::path& p) {
  struct stat st;
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

template <typename Fn>
Fn fn(const KernelLibraryResult& r, const char* name) {
  return reinterpret_cast<Fn>(r.library->symbol(name));
}

TEST(KernelLibraryBuilder, CompilesSourceIntoALibraryWhoseFunctionsRun) {
  TempDir dir;
  KernelLibraryBuilder compiler(options_in(dir));
  KernelLibraryResult r = compiler.compile(kAddSource);
  ASSERT_TRUE(r.library);
  EXPECT_FALSE(r.cache_hit);
  EXPECT_GT(r.compile_s, 0);
  EXPECT_EQ(r.key.size(), 64u);
  EXPECT_EQ(fn<int (*)(int, int)>(r, "add")(2, 40), 42);

  // Layout users rely on when they go looking: kernels/<k[0:2]>/<k>.so with <k>.cpp beside it.
  fs::path so = fs::path(compiler.cache_dir()) / "kernels" / r.key.substr(0, 2) / (r.key + ".so");
  EXPECT_EQ(r.library->path(), so.string());
  EXPECT_TRUE(fs::is_regular_file(so));
  EXPECT_EQ(testing::read_file(so.parent_path() / (r.key + ".cpp")), kAddSource);
  EXPECT_TRUE(files_containing(dir.path(), ".tmp.").empty());
}

TEST(KernelLibraryBuilder, IdenticalSourceInOneProcessSharesTheLoadedLibrary) {
  TempDir dir;
  KernelLibraryBuilder compiler(options_in(dir));
  KernelLibraryResult first = compiler.compile(kAddSource);
  KernelLibraryResult second = compiler.compile(kAddSource);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.compile_s, 0);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.library, first.library);  // same object: no second dlopen, no disk
  // Another instance on the same cache shares it too (regional compilation across modules).
  KernelLibraryBuilder other(options_in(dir));
  EXPECT_EQ(other.compile(kAddSource).library, first.library);
}

TEST(KernelLibraryBuilder, CachedLibraryOnDiskIsLoadedWithoutRunningTheCompiler) {
  TempDir dir;
  auto options = options_in(dir);
  options.compiler = counting_compiler(dir);
  std::string key;
  {
    KernelLibraryBuilder compiler(options);
    KernelLibraryResult r = compiler.compile(kAddSource);
    EXPECT_FALSE(r.cache_hit);
    key = r.key;
  }  // library released: the next load must come from disk
  ASSERT_EQ(compile_count(dir), 1);

  KernelLibraryBuilder again(options);
  KernelLibraryResult r = again.compile(kAddSource);
  EXPECT_TRUE(r.cache_hit);
  EXPECT_EQ(r.compile_s, 0);
  EXPECT_EQ(r.key, key);
  EXPECT_EQ(fn<int (*)(int, int)>(r, "add")(1, 2), 3);
  EXPECT_EQ(compile_count(dir), 1);  // no compiler ran
}

// A compiler whose --version prints `version` and is logged to `calls`, then runs the system c++.
std::string versioned_compiler(const TempDir& dir, const std::string& version) {
  std::string script = dir.file("versioned-c++");
  write_script(script, "case \"$*\" in *--version*) echo version >> '" + dir.file("calls") + "'; echo '" + version +
                           "'; exit 0 ;; esac\nexec c++ \"$@\"\n");
  return script;
}

// The compiler's --version line is kept in the cache, so a warm start does not start the compiler
// (a fork of a process holding a large model) just to learn it; a changed compiler file misses.
TEST(KernelLibraryBuilder, WarmStartReadsTheCompilerVersionFromTheCache) {
  TempDir dir;
  auto options = options_in(dir);
  options.compiler = versioned_compiler(dir, "tcc 1.0");
  std::string key;
  {
    KernelLibraryBuilder compiler(options);
    key = compiler.compile(kAddSource).key;
  }
  ASSERT_EQ(compile_count(dir), 1);  // the one --version line
  ASSERT_EQ(files_containing(fs::path(options.cache_dir) / "compilers", ".version").size(), 1u);

  // Another process on a copy of the cache (a new folder: this process remembers the first).
  auto compile_in_copy = [&](const std::string& name) {
    auto copy = options;
    copy.cache_dir = dir.file(name);
    fs::copy(options.cache_dir, copy.cache_dir, fs::copy_options::recursive);
    return KernelLibraryBuilder(copy).compile(kAddSource);
  };
  KernelLibraryResult warm = compile_in_copy("copy");
  EXPECT_TRUE(warm.cache_hit);
  EXPECT_EQ(warm.key, key);
  EXPECT_EQ(compile_count(dir), 1);  // no --version run, no compile

  // An upgraded compiler (a new file in its place) is asked again, and its kernels are new keys.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  fs::remove(options.compiler);
  versioned_compiler(dir, "tcc 2.0");
  KernelLibraryResult upgraded = compile_in_copy("upgraded");
  EXPECT_FALSE(upgraded.cache_hit);
  EXPECT_NE(upgraded.key, key);
  EXPECT_EQ(testing::read_file(dir.file("calls")), "version\nversion\n");
}

TEST(KernelLibraryBuilder, FlagsArePartOfTheKey) {
  TempDir dir;
  const char* source = R"(
#ifndef VALUE
#define VALUE 1
#endif
extern "C" int value() { return VALUE; })";
  KernelLibraryBuilder plain(options_in(dir));
  auto options = options_in(dir);
  options.extra_flags = {"-DVALUE=7"};
  KernelLibraryBuilder defined(options);
  EXPECT_EQ(defined.flags().back(), "-DVALUE=7");

  KernelLibraryResult a = plain.compile(source);
  KernelLibraryResult b = defined.compile(source);
  EXPECT_NE(a.key, b.key);
  EXPECT_FALSE(b.cache_hit);
  EXPECT_EQ(fn<int (*)()>(a, "value")(), 1);
  EXPECT_EQ(fn<int (*)()>(b, "value")(), 7);
}

TEST(KernelLibraryBuilder, DefaultFlagsOptimiseWithoutFastMath) {
  KernelLibraryOptions options;
  options.cache_dir = "/nonexistent-unused";
  const std::vector<std::string> flags = KernelLibraryBuilder(options).flags();
  auto has = [&](const std::string& f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); };
  for (const char* f : {"-O3", "-std=c++17", "-shared", "-fPIC", "-fno-math-errno",
                        "-fno-trapping-math", "-ffp-contract=off", "-fopenmp"}) {
    EXPECT_TRUE(has(f)) << f;
  }
  EXPECT_FALSE(has("-ffast-math"));
  options.openmp = false;
  const std::vector<std::string> no_omp = KernelLibraryBuilder(options).flags();
  EXPECT_EQ(std::find(no_omp.begin(), no_omp.end(), "-fopenmp"), no_omp.end());
}

TEST(KernelLibraryBuilder, NanAndInfinityBehaveUnderTheFlags) {
  TempDir dir;
  KernelLibraryBuilder compiler(options_in(dir));
  KernelLibraryResult r = compiler.compile(R"(
#include <cmath>
extern "C" int is_nan(float x) { return std::isnan(x) ? 1 : 0; }
extern "C" float relu_max(float a, float b) { return a > b ? a : b; }
extern "C" float sum(const float* x, int n) { float s = 0; for (int i = 0; i < n; ++i) s += x[i]; return s; }
extern "C" float root(float x) { return std::sqrt(x); })");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fn<int (*)(float)>(r, "is_nan")(nan), 1);
  EXPECT_EQ(fn<int (*)(float)>(r, "is_nan")(1.0f), 0);
  float with_nan[64] = {};
  with_nan[37] = nan;
  EXPECT_TRUE(std::isnan(fn<float (*)(const float*, int)>(r, "sum")(with_nan, 64)));
  float with_inf[64] = {};
  with_inf[5] = inf;
  EXPECT_EQ(fn<float (*)(const float*, int)>(r, "sum")(with_inf, 64), inf);
  EXPECT_TRUE(std::isnan(fn<float (*)(float)>(r, "root")(-1.0f)));
  EXPECT_EQ(fn<float (*)(float, float)>(r, "relu_max")(inf, 0.0f), inf);
}

TEST(KernelLibraryBuilder, CacheDirectoriesItCreatesArePrivate) {
  TempDir dir;
  KernelLibraryOptions options;
  options.cache_dir = dir.file("a/b/cache");
  KernelLibraryResult r = KernelLibraryBuilder(options).compile(kAddSource);
  fs::path cache = dir.path() / "a/b/cache";
  for (const fs::path& p : {dir.path() / "a", dir.path() / "a/b", cache, cache / "kernels",
                            cache / "kernels" / r.key.substr(0, 2)}) {
    EXPECT_EQ(mode_of(p), 0700) << p;
  }

  // A cache root the user made with wider permissions is left alone; what we create is 0700.
  fs::path shared_root = dir.path() / "shared";
  fs::create_directory(shared_root);
  ::chmod(shared_root.c_str(), 0755);
  options.cache_dir = shared_root.string();
  KernelLibraryBuilder(options).compile(kAddSource);
  EXPECT_EQ(mode_of(shared_root), 0755);
  EXPECT_EQ(mode_of(shared_root / "kernels"), 0700);
}

TEST(KernelLibraryBuilder, SyntaxErrorReportsTheCompilersMessageAndLeavesNoTempFiles) {
  TempDir dir;
  KernelLibraryBuilder compiler(options_in(dir));
  try {
    compiler.compile("extern \"C\" int broken( { return 1; }\n");
    FAIL() << "expected KernelLibraryError";
  } catch (const KernelLibraryError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.rfind("C++ compiler failed (exit 1): ", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;  // one line
    EXPECT_NE(what.find("error"), std::string::npos) << what;
    EXPECT_NE(e.output().find("error:"), std::string::npos) << e.output();
    EXPECT_NE(e.output().find(".cpp:1:"), std::string::npos) << e.output();  // points at the source
  }
  EXPECT_TRUE(files_containing(dir.path(), ".tmp.").empty());
  EXPECT_TRUE(files_containing(dir.path(), ".so").empty());
}

TEST(KernelLibraryBuilder, LinkerFailureNamesWhatTheLinkerCouldNotFind) {
  TempDir dir;
  auto options = options_in(dir);
  options.extra_flags = {"-ltcprof_no_such_library"};
  try {
    KernelLibraryBuilder(options).compile(kAddSource);
    FAIL() << "expected KernelLibraryError";
  } catch (const KernelLibraryError& e) {
    // Not collect2's "ld returned 1 exit status", which says nothing.
    EXPECT_NE(std::string(e.what()).find("tcprof_no_such_library"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(files_containing(dir.path(), ".tmp.").empty());
}

// Generated code that calls a function nobody defines links (-shared allows it) but cannot load.
TEST(KernelLibraryBuilder, LibraryThatCannotLoadIsAnErrorAndNotCached) {
  TempDir dir;
  const char* source = R"(extern "C" int tcprof_undefined_helper(int);
extern "C" int call(int x) { return tcprof_undefined_helper(x); })";
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      KernelLibraryBuilder(options_in(dir)).compile(source);
      FAIL() << "expected KernelLibraryError";
    } catch (const KernelLibraryError& e) {
      EXPECT_NE(std::string(e.what()).find("undefined symbol: tcprof_undefined_helper"),
                std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(files_containing(dir.path(), ".so").empty());
  }
}

TEST(KernelLibraryBuilder, MissingCompilerIsAClearError) {
  TempDir dir;
  for (std::string name : {std::string("tcprof-no-such-compiler"), dir.file("missing/c++")}) {
    auto options = options_in(dir);
    options.compiler = name;
    try {
      KernelLibraryBuilder(options).compile(kAddSource);
      FAIL() << "expected KernelLibraryError";
    } catch (const KernelLibraryError& e) {
      EXPECT_EQ(std::string(e.what()), "C++ compiler '" + name +
                                           "' not found: install g++ (apt-get install g++) or set "
                                           "TCPROF_CXX");
    }
  }
  EXPECT_TRUE(files_containing(dir.path(), ".tmp.").empty());
}

TEST(KernelLibraryBuilder, MissingSymbolIsAnError) {
  TempDir dir;
  KernelLibraryResult r = KernelLibraryBuilder(options_in(dir)).compile(kAddSource);
  EXPECT_THROW(r.library->symbol("sub"), KernelLibraryError);
}

TEST(KernelLibraryBuilder, CorruptCachedLibraryIsRebuilt) {
  TempDir dir;
  std::string so;
  {
    KernelLibraryResult r = KernelLibraryBuilder(options_in(dir)).compile(kAddSource);
    so = r.library->path();
  }
  auto size = fs::file_size(so);
  for (int variant = 0; variant < 2; ++variant) {
    if (variant == 0) {
      fs::resize_file(so, size / 2);  // truncated: an interrupted copy, a full disk
    } else {
      std::ofstream(so, std::ios::trunc) << "not a library";
    }
    KernelLibraryResult r = KernelLibraryBuilder(options_in(dir)).compile(kAddSource);
    EXPECT_FALSE(r.cache_hit) << variant;
    EXPECT_EQ(fn<int (*)(int, int)>(r, "add")(20, 22), 42) << variant;
    EXPECT_EQ(fs::file_size(so), size) << variant;
  }
}

TEST(KernelLibraryBuilder, ThreadsAskingForTheSameNewSourceCompileItOnce) {
  TempDir dir;
  auto options = options_in(dir);
  options.compiler = counting_compiler(dir);
  KernelLibraryBuilder compiler(options);
  std::vector<KernelLibraryResult> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&] { result = compiler.compile(kAddSource); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(compile_count(dir), 1);
  int misses = 0;
  for (const auto& result : results) {
    EXPECT_EQ(result.library, results[0].library);
    misses += result.cache_hit ? 0 : 1;
  }
  EXPECT_EQ(misses, 1);
}

TEST(KernelLibraryBuilder, ConcurrentProcessesSharingACacheBothSucceed) {
  TempDir dir;
  // Unique source, so the parent's in-process registry cannot answer for the children.
  std::string source = std::string(kAddSource) + "\n// " + dir.path().string() + "\n";
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      char c;
      while (::read(gate[0], &c, 1) > 0) {
      }  // both start together when the parent closes the gate
      int code = 1;
      try {
        KernelLibraryResult r = KernelLibraryBuilder(options_in(dir)).compile(source);
        code = fn<int (*)(int, int)>(r, "add")(3, 4) == 7 ? 0 : 2;
      } catch (...) {
        code = 3;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_EQ(files_containing(dir.path(), ".so").size(), 2u);  // the library and its .sha256
  EXPECT_EQ(files_containing(dir.path(), ".so.sha256").size(), 1u);
  EXPECT_TRUE(files_containing(dir.path(), ".tmp.").empty());
  KernelLibraryResult r = KernelLibraryBuilder(options_in(dir)).compile(source);
  EXPECT_TRUE(r.cache_hit);
}

// Also a regression test: the library's dlclose at the end used to unload libgomp under its parked
// worker threads and crash the process.
TEST(KernelLibraryBuilder, OpenMpLoopsCompileAndRun) {
  TempDir dir;
  KernelLibraryResult r = KernelLibraryBuilder(options_in(dir)).compile(R"(
extern "C" int openmp_enabled() {
#ifdef _OPENMP
  return 1;
#else
  return 0;
#endif
}
extern "C" void scale(float* x, long n, float s) {
#pragma omp parallel for
  for (long i = 0; i < n; ++i) x[i] *= s;
}
extern "C" long sum_to(long n) {
  long total = 0;
#pragma omp parallel for reduction(+ : total)
  for (long i = 1; i <= n; ++i) total += i;
  return total;
})");
  EXPECT_EQ(fn<int (*)()>(r, "openmp_enabled")(), 1);
  std::vector<float> x(100000, 2.0f);
  fn<void (*)(float*, long, float)>(r, "scale")(x.data(), static_cast<long>(x.size()), 1.5f);
  EXPECT_TRUE(std::all_of(x.begin(), x.end(), [](float v) { return v == 3.0f; }));
  EXPECT_EQ(fn<long (*)(long)>(r, "sum_to")(100000), 100000L * 100001L / 2);
}

TEST(KernelLibraryBuilder, HungCompilerIsKilledAtTheTimeout) {
  TempDir dir;
  auto options = options_in(dir);
  options.compiler = dir.file("slow-c++");
  write_script(options.compiler,
               "case \"$*\" in *--version*) echo 'slow 1.0'; exit 0 ;; esac\nsleep 30\n");
  options.timeout_s = 1;
  auto start = std::chrono::steady_clock::now();
  try {
    KernelLibraryBuilder(options).compile(kAddSource);
    FAIL() << "expected KernelLibraryError";
  } catch (const KernelLibraryError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_TRUE(files_containing(dir.path(), ".tmp.").empty());
}

TEST(KernelLibraryBuilder, DefaultsComeFromTheEnvironment) {
  TempDir dir;
  auto saved = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto cxx = saved("TCPROF_CXX"), cache = saved("TCPROF_CACHE_DIR"), xdg = saved("XDG_CACHE_HOME");
  ::setenv("TCPROF_CXX", "my-c++", 1);
  ::setenv("TCPROF_CACHE_DIR", dir.file("env-cache").c_str(), 1);
  KernelLibraryBuilder from_env;
  EXPECT_EQ(from_env.compiler(), "my-c++");
  EXPECT_EQ(from_env.cache_dir(), dir.file("env-cache"));
  ::unsetenv("TCPROF_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", dir.file("xdg").c_str(), 1);
  EXPECT_EQ(KernelLibraryBuilder().cache_dir(), dir.file("xdg") + "/tcprof");
  auto restore = [](const char* name, const std::optional<std::string>& v) {
    if (v) ::setenv(name, v->c_str(), 1); else ::unsetenv(name);
  };
  restore("TCPROF_CXX", cxx);
  restore("TCPROF_CACHE_DIR", cache);
  restore("XDG_CACHE_HOME", xdg);
}

}  // namespace
}  // namespace tcprof
