#include "compiler/toolchain/kernel_library.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "compiler/toolchain/cache_files.h"
#include "compiler/toolchain/child_process.h"
#include "core/log.h"
#include "core/sha256.h"


namespace tcprof {
namespace {

namespace fs = std::filesystem;

// Bumped whenever what goes into the key (or the file layout) changes meaning.
constexpr const char* kKeyVersion = "tcprof-native-1";
constexpr size_t kMaxOutput = 1 << 20;  // compiler output kept for the error (template spew is huge)

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> words;
  std::istringstream in(s);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// PATH lookup as execvp does it; returns the canonical path, or "" when there is no such program.
std::string resolve_program(const std::string& name) {
  auto usable = [](const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  auto canonical = [](const std::string& p) {
    std::error_code ec;
    fs::path c = fs::canonical(p, ec);
    return ec ? p : c.string();
  };
  if (name.find('/') != std::string::npos) return usable(name) ? canonical(name) : "";
  std::string path = env("PATH");
  if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t end = path.find(':', pos);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(pos, end - pos);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (usable(candidate)) return canonical(candidate);
    pos = end + 1;
  }
  return "";
}

std::string not_found_message(const std::string& compiler) {
  return "C++ compiler '" + compiler +
         "' not found: install g++ (apt-get install g++) or set TCPROF_CXX";
}

// A compiler's --version line, kept in the cache under the identity of its executable (path,
// device, inode, size, times): an upgrade replaces the file and so misses. Starting the compiler
// costs a fork of tcprof, 60-80 ms once a model of ViT-B's size is loaded, which a warm start
// would otherwise pay for one line it already knows.
std::string version_file(const std::string& cache_dir, const std::string& program,
                         const std::vector<std::string>& words) {
  struct stat st;
  if (cache_dir.empty() || ::stat(program.c_str(), &st) != 0) return "";
  std::string material = fmt::format("{}\n{} {} {} {}.{} {}.{}", program, st.st_dev, st.st_ino, st.st_size,
                                     st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
  for (const auto& w : words) material += "\n" + w;
  return cache_dir + "/compilers/" + sha256_hex(material).substr(0, 32) + ".version";
}

// The first line `program --version` prints (words[1..] passed too); throws naming `compiler`.
std::string ask_version(const std::string& compiler, const std::string& program, const std::vector<std::string>& words) {
  std::vector<std::string> argv = words;
  argv[0] = program;
  argv.push_back("--version");
  ProcessOptions options;
  options.timeout_s = 60;
  ProcessResult r = run_process(argv, options);
  if (r.spawn_errno != 0) {
    throw KernelLibraryError("C++ compiler '" + compiler + "' (" + program +
                                 ") cannot be started: " + std::strerror(r.spawn_errno),
                             "");
  }
  if (r.timed_out || !WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
    throw KernelLibraryError("C++ compiler '" + compiler + "' (" + program + ") failed to run '--version'", r.output);
  }
  return r.output.substr(0, r.output.find('\n'));
}

// The compiler's identity for the cache key: resolved path, leading words, first --version line.
// Computed once per process per compiler string and cache, and read from the cache when it holds it.
std::string compiler_identity(const std::string& compiler, const std::vector<std::string>& words,
                              const std::string& cache_dir) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  const std::string memo_key = compiler + "\n" + cache_dir;
  auto it = cache.find(memo_key);
  if (it != cache.end()) return it->second;

  std::string program = resolve_program(words.at(0));
  if (program.empty()) {
    throw KernelLibraryError(not_found_message(compiler), "searched PATH=" + env("PATH"));
  }
  std::string identity = program;
  for (size_t i = 1; i < words.size(); ++i) identity += " " + words[i];
  const std::string known = version_file(cache_dir, program, words);
  std::string version;
  if (!known.empty()) std::getline(std::ifstream(known), version);
  if (version.empty()) {
    version = ask_version(compiler, program, words);
    if (!known.empty() && !version.empty()) {
      try {
        ensure_dir(fs::path(known).parent_path().string());
        write_file_atomic(known, version + "\n");
      } catch (const KernelLibraryError& e) {  // a read-only cache still compiles, only slower
        log(LogChannel::OutputCode, "kernel cache: compiler version not kept: {}", e.what());
      }
    }
  }
  identity += "\n" + version;
  cache.emplace(memo_key, identity);
  return identity;
}

// The line a user most needs from a failed compile: the first diagnostic error (not collect2's
// summary, which only says ld failed), else the linker's complaint, else any error, else line one.
std::string first_error_line(const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  }
  auto find = [&](auto&& match) -> const std::string* {
    for (const auto& line : lines) {
      if (match(line)) return &line;
    }
    return nullptr;
  };
  const std::string* best = find([](const std::string& l) {
    return l.find("error:") != std::string::npos && l.rfind("collect2:", 0) != 0;
  });
  if (!best) best = find([](const std::string& l) { return l.find("ld: ") != std::string::npos; });
  if (!best) best = find([](const std::string& l) { return l.find("rror") != std::string::npos; });
  if (!best && !lines.empty()) best = &lines.front();
  if (!best) return "(no output)";
  std::string first = *best;
  if (first.size() > 400) first = first.substr(0, 400) + "...";
  return first;
}

// In-process registry: one slot per library path. The slot's mutex makes two threads asking for the
// same new key compile it once; the weak_ptr lets identical code (repeated blocks) share one load.
struct Slot {
  std::mutex mu;
  std::weak_ptr<LoadedLibrary> library;
};

std::shared_ptr<Slot> slot_for(const std::string& so_path) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<Slot>> slots;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = slots[so_path];
  if (!slot) slot = std::make_shared<Slot>();
  return slot;
}

std::string default_cache_dir() {
  std::string dir = env("TCPROF_CACHE_DIR");
  if (!dir.empty()) return dir;
  std::string xdg = env("XDG_CACHE_HOME");
  if (!xdg.empty() && xdg[0] == '/') return xdg + "/tcprof";
  std::string home = env("HOME");
  if (home.empty()) {
    if (const passwd* pw = ::getpwuid(::getuid())) home = pw->pw_dir ? pw->pw_dir : "";
  }
  if (home.empty()) home = fs::temp_directory_path().string();
  return home + "/.cache/tcprof";
}

// An OpenMP runtime pulled in by a kernel library must outlive it: its worker threads stay parked
// inside the runtime after a parallel region, and unmapping it under them (the last kernel's dlclose,
// when nothing else links it) crashes the process. Pin whichever runtime is loaded, once.
void pin_openmp_runtime() {
  static std::atomic<bool> pinned{false};
  if (pinned.load(std::memory_order_acquire)) return;
  for (const char* name : {"libgomp.so.1", "libomp.so.5", "libomp.so", "libiomp5.so"}) {
    if (::dlopen(name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) pinned.store(true);
  }
}

}  // namespace

std::shared_ptr<LoadedLibrary> LoadedLibrary::open(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = ::dlerror();
    std::string message = err ? err : "unknown dlopen error";
    throw KernelLibraryError("cannot load compiled library: " + message, message);
  }
  pin_openmp_runtime();
  return std::make_shared<LoadedLibrary>(handle, path);
}

LoadedLibrary::~LoadedLibrary() {
  if (handle_) ::dlclose(handle_);
}

void* LoadedLibrary::symbol(const std::string& name) const {
  ::dlerror();
  void* sym = ::dlsym(handle_, name.c_str());
  if (!sym) {
    const char* err = ::dlerror();
    throw KernelLibraryError("symbol '" + name + "' not found in " + path_,
                             err ? err : "symbol is null");
  }
  return sym;
}

KernelLibraryBuilder::KernelLibraryBuilder(KernelLibraryOptions options) : options_(std::move(options)) {
  compiler_ = options_.compiler;
  if (compiler_.empty()) compiler_ = env("TCPROF_CXX");
  if (compiler_.empty()) compiler_ = env("CXX");
  compiler_words_ = split_words(compiler_);
  if (compiler_words_.empty()) {
    compiler_ = "c++";
    compiler_words_ = {"c++"};
  }
  std::string dir = options_.cache_dir.empty() ? default_cache_dir() : options_.cache_dir;
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  cache_dir_ = (ec ? fs::path(dir) : abs).lexically_normal().string();
  while (cache_dir_.size() > 1 && cache_dir_.back() == '/') cache_dir_.pop_back();

  // No -ffast-math: results must match eager (1e-4 relative) and NaN/inf must propagate. Dropping
  // errno and trapping semantics is enough for sqrt/exp to inline and loops to vectorise.
  // -ffp-contract=off: GCC would fuse a * b + c across primitives, and differently in each loop of
  // a row kernel, so a value recomputed in two phases came out with two roundings (layer norm of
  // silu(x) over one element gave x - mean = 1e-7, not 0; fuzz_graphs seed 4242). The prelude's
  // math asks for its fused multiply-adds by name (tc_fma).
  flags_ = {"-O3", "-std=c++17", "-shared", "-fPIC", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off"};
  if (options_.openmp) flags_.push_back("-fopenmp");
  for (auto& f : cpu_flags()) flags_.push_back(f);
  for (auto& f : options_.extra_flags) {
    if (!f.empty()) flags_.push_back(f);
  }
}

void KernelLibraryBuilder::prepare_cache_dir() {
  std::call_once(cache_prepared_, [&] {
    check_cache_dir_is_private(cache_dir_);
    check_cache_dir_is_private(cache_dir_ + "/kernels");
    int removed = remove_stale_temporaries(cache_dir_ + "/kernels");
    if (removed > 0) {
      log(LogChannel::OutputCode, "kernel cache: removed {} temporaries of killed processes", removed);
    }
  });
}

KernelLibraryBuilder& KernelLibraryBuilder::shared() {
  static KernelLibraryBuilder instance;
  return instance;
}

KernelLibraryResult KernelLibraryBuilder::compile(const std::string& source) {
  std::string material = kKeyVersion;
  auto add = [&](const std::string& part) {
    material += "\n" + std::to_string(part.size()) + ":";
    material += part;
  };
  prepare_cache_dir();
  add(compiler_identity(compiler_, compiler_words_, cache_dir_));
  add(std::to_string(flags_.size()));
  for (const auto& f : flags_) add(f);
  add(source);
  std::string key = sha256_hex(material);
  std::string so_path = cache_dir_ + "/kernels/" + key.substr(0, 2) + "/" + key + ".so";

  std::shared_ptr<Slot> slot = slot_for(so_path);
  std::lock_guard<std::mutex> lock(slot->mu);
  if (auto library = slot->library.lock()) {
    KernelLibraryResult hit;
    hit.library = std::move(library);
    hit.key = key;
    hit.cache_hit = true;
    return hit;
  }
  KernelLibraryResult result = load_or_build(source, key, so_path);
  slot->library = result.library;
  return result;
}

KernelLibraryResult KernelLibraryBuilder::load_or_build(const std::string& source, const std::string& key,
                                                  const std::string& so_path) {
  KernelLibraryResult result;
  result.key = key;
  struct stat st;
  if (::stat(so_path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    std::string problem = elf_problem(so_path);
    if (problem.empty()) problem = library_hash_problem(so_path);
    if (problem.empty()) {
      try {
        result.library = LoadedLibrary::open(so_path);
        result.cache_hit = true;
        log(LogChannel::OutputCode, "kernel cache: hit {}", so_path);
        return result;
      } catch (const KernelLibraryError& e) {
        problem = e.output();
      }
    }
    // A damaged entry (disk trouble, a hand edit) is rebuilt, not fatal, and the user hears of it:
    // a cache that keeps getting damaged is worth knowing about.
    fmt::print(stderr, "tcprof: kernel cache: {} is damaged ({}); rebuilding it\n", so_path, problem);
    ::unlink(so_path.c_str());
    ::unlink(hash_file_of(so_path).c_str());
  }

  fs::path shard = fs::path(so_path).parent_path();
  ensure_dir(shard.string());
  std::string cpp_path = shard.string() + "/" + key + ".cpp";
  write_file_atomic(cpp_path, source);

  TempFile tmp(temp_name(so_path));
  result.compile_s = run_compiler(cpp_path, tmp.path());
  write_library_hash(tmp.path(), so_path);
  tmp.commit_to(so_path);
  try {
    result.library = LoadedLibrary::open(so_path);
  } catch (...) {
    ::unlink(so_path.c_str());  // do not leave a library that cannot load in the cache
    ::unlink(hash_file_of(so_path).c_str());
    throw;
  }
  log(LogChannel::OutputCode, "kernel cache: compiled {} in {:.2f}s", so_path, result.compile_s);
  return result;
}

double KernelLibraryBuilder::run_compiler(const std::string& cpp_path, const std::string& out_path) {
  std::string program = resolve_program(compiler_words_[0]);
  if (program.empty()) throw KernelLibraryError(not_found_message(compiler_), "");
  std::vector<std::string> argv = compiler_words_;
  argv[0] = program;
  argv.insert(argv.end(), flags_.begin(), flags_.end());
  argv.insert(argv.end(), {cpp_path, "-o", out_path});

  ProcessOptions options;
  options.timeout_s = options_.timeout_s;
  options.max_output = kMaxOutput;
  options.remove_if_orphaned = out_path;
  ProcessResult r = run_process(argv, options);
  if (r.spawn_errno == ENOENT) throw KernelLibraryError(not_found_message(compiler_), "");
  if (r.spawn_errno != 0) {
    throw KernelLibraryError("C++ compiler '" + compiler_ + "' cannot be started: " +
                                 std::strerror(r.spawn_errno),
                             "");
  }
  if (r.timed_out) {
    throw KernelLibraryError("C++ compiler timed out after " +
                                 std::to_string(static_cast<int>(options_.timeout_s)) +
                                 " s and was killed (source: " + cpp_path + ")",
                             r.output);
  }
  if (WIFSIGNALED(r.status)) {
    throw KernelLibraryError("C++ compiler killed by signal " + std::to_string(WTERMSIG(r.status)) +
                                 ": " + first_error_line(r.output),
                             r.output);
  }
  if (WEXITSTATUS(r.status) != 0) {
    throw KernelLibraryError("C++ compiler failed (exit " + std::to_string(WEXITSTATUS(r.status)) +
                                 "): " + first_error_line(r.output),
                             r.output);
  }
  return r.seconds;
}

}  // namespace tcprof
