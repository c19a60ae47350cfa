#include "compiler/toolchain/kernel_library.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
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
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "core/log.h"
#include "core/sha256.h"

extern char** environ;

namespace tcprof {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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

struct ProcessResult {
  int spawn_errno = 0;  // posix_spawn failed with this errno; nothing ran
  int status = 0;       // waitpid status
  bool timed_out = false;
  std::string output;   // stdout and stderr, interleaved
  double seconds = 0;
};

// Runs argv[0] (a path) with argv, stdin from /dev/null, stdout+stderr captured. The child leads a
// new process group so a timeout kills the driver and everything it started (cc1plus, as, ld).
ProcessResult run_process(const std::vector<std::string>& argv, double timeout_s) {
  ProcessResult result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.spawn_errno = errno;
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t mask;
  sigemptyset(&mask);
  posix_spawnattr_setsigmask(&attr, &mask);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);

  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  auto start = Clock::now();
  pid_t pid = -1;
  int rc = posix_spawn(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    result.spawn_errno = rc;
    return result;
  }

  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(timeout_s));
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count() + 1, 60000)));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) break;  // EOF: every writer (the compiler and its children) is done
    if (result.output.size() < kMaxOutput) result.output.append(buf, static_cast<size_t>(got));
  }
  ::close(fds[0]);
  while (::waitpid(pid, &result.status, 0) < 0 && errno == EINTR) {
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (result.output.size() >= kMaxOutput) result.output += "\n[output truncated]\n";
  return result;
}

std::string not_found_message(const std::string& compiler) {
  return "C++ compiler '" + compiler +
         "' not found: install g++ (apt-get install g++) or set TCPROF_CXX";
}

// The compiler's identity for the cache key: resolved path, leading words, first --version line.
// Computed once per process per compiler string.
std::string compiler_identity(const std::string& compiler, const std::vector<std::string>& words) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(compiler);
  if (it != cache.end()) return it->second;

  std::string program = resolve_program(words.at(0));
  if (program.empty()) {
    throw KernelLibraryError(not_found_message(compiler), "searched PATH=" + env("PATH"));
  }
  std::vector<std::string> argv = words;
  argv[0] = program;
  argv.push_back("--version");
  ProcessResult r = run_process(argv, 60);
  if (r.spawn_errno != 0) {
    throw KernelLibraryError("C++ compiler '" + compiler + "' (" + program +
                                 ") cannot be started: " + std::strerror(r.spawn_errno),
                             "");
  }
  if (r.timed_out || !WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
    throw KernelLibraryError(
        "C++ compiler '" + compiler + "' (" + program + ") failed to run '--version'", r.output);
  }
  std::string version = r.output.substr(0, r.output.find('\n'));
  std::string identity = program;
  for (size_t i = 1; i < words.size(); ++i) identity += " " + words[i];
  identity += "\n" + version;
  cache.emplace(compiler, identity);
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

// mkdir -p, each directory it creates mode 0700; existing directories are left as they are.
void ensure_dir(const fs::path& dir) {
  fs::path current;
  for (const auto& part : dir) {
    current /= part;
    struct stat st;
    if (::stat(current.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        throw KernelLibraryError("cache path '" + current.string() + "' is not a directory", "");
      }
      continue;
    }
    if (::mkdir(current.c_str(), 0700) != 0 && errno != EEXIST) {
      throw KernelLibraryError("cannot create cache directory '" + current.string() +
                                   "': " + std::strerror(errno) + " (set TCPROF_CACHE_DIR)",
                               "");
    }
  }
}

std::string temp_name(const std::string& final_path) {
  static std::atomic<unsigned long long> counter{0};
  return final_path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

// Removes a temp file unless it was renamed into place.
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) {}
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  void commit_to(const std::string& final_path) {
    if (::rename(path_.c_str(), final_path.c_str()) != 0) {
      throw KernelLibraryError(
          "cannot move '" + path_ + "' to '" + final_path + "': " + std::strerror(errno), "");
    }
    path_.clear();
  }

 private:
  std::string path_;
};

void write_file_atomic(const std::string& path, const std::string& data) {
  TempFile tmp(temp_name(path));
  int fd = ::open(tmp.path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw KernelLibraryError("cannot write '" + tmp.path() + "': " + std::strerror(errno), "");
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      throw KernelLibraryError("cannot write '" + tmp.path() + "': " + std::strerror(err), "");
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  tmp.commit_to(path);
}

// dlopen maps segments without checking that the file holds them, and touching a page past the end
// of a truncated file is SIGBUS. A cached library is only opened when its ELF headers say the file
// is whole. Returns "" when it is, else why not.
std::string elf_problem(const std::string& path) {
  if (sizeof(void*) != 8) return "";  // 32-bit hosts: left to dlopen
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::strerror(errno);
  struct stat st;
  std::string problem;
  Elf64_Ehdr eh;
  if (::fstat(fd, &st) != 0) {
    problem = std::strerror(errno);
  } else if (::pread(fd, &eh, sizeof eh, 0) != static_cast<ssize_t>(sizeof eh) ||
             std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) {
    problem = "not a 64-bit ELF file";
  } else {
    auto size = static_cast<uint64_t>(st.st_size);
    uint64_t ph_end = eh.e_phoff + uint64_t(eh.e_phnum) * eh.e_phentsize;
    uint64_t sh_end = eh.e_shoff + uint64_t(eh.e_shnum) * eh.e_shentsize;
    if (ph_end > size || sh_end > size || eh.e_phentsize != sizeof(Elf64_Phdr)) {
      problem = "truncated (headers past the end of the file)";
    }
    for (unsigned i = 0; problem.empty() && i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      if (::pread(fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph)) !=
          static_cast<ssize_t>(sizeof ph)) {
        problem = "unreadable program header";
      } else if (ph.p_offset + ph.p_filesz > size) {
        problem = "truncated (a segment ends past the end of the file)";
      }
    }
  }
  ::close(fd);
  return problem;
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
  flags_ = {"-O3", "-std=c++17", "-shared", "-fPIC", "-fno-math-errno", "-fno-trapping-math"};
  if (options_.openmp) flags_.push_back("-fopenmp");
  for (auto& f : cpu_flags()) flags_.push_back(f);
  for (auto& f : options_.extra_flags) {
    if (!f.empty()) flags_.push_back(f);
  }
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
  add(compiler_identity(compiler_, compiler_words_));
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
    // A damaged entry (disk trouble, a hand edit) is rebuilt, not fatal.
    log(LogChannel::OutputCode, "kernel cache: cached {} is unusable ({}); recompiling", so_path, problem);
    ::unlink(so_path.c_str());
  }

  fs::path shard = fs::path(so_path).parent_path();
  ensure_dir(shard);
  std::string cpp_path = shard.string() + "/" + key + ".cpp";
  write_file_atomic(cpp_path, source);

  TempFile tmp(temp_name(so_path));
  result.compile_s = run_compiler(cpp_path, tmp.path());
  tmp.commit_to(so_path);
  try {
    result.library = LoadedLibrary::open(so_path);
  } catch (...) {
    ::unlink(so_path.c_str());  // do not leave a library that cannot load in the cache
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

  ProcessResult r = run_process(argv, options_.timeout_s);
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
