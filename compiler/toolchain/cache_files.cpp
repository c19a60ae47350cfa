#include "compiler/toolchain/cache_files.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "compiler/toolchain/kernel_library.h"
#include "core/sha256.h"

namespace tcprof {

namespace fs = std::filesystem;

void ensure_dir(const std::string& dir) {
  fs::path current;
  for (const auto& part : fs::path(dir)) {
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

TempFile::~TempFile() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

void TempFile::commit_to(const std::string& final_path) {
  if (::rename(path_.c_str(), final_path.c_str()) != 0) {
    throw KernelLibraryError(
        "cannot move '" + path_ + "' to '" + final_path + "': " + std::strerror(errno), "");
  }
  path_.clear();
}

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

std::string hash_file_of(const std::string& library) { return library + ".sha256"; }

void write_library_hash(const std::string& library_to_hash, const std::string& final_library) {
  write_file_atomic(hash_file_of(final_library), sha256_file(library_to_hash) + "\n");
}

std::string library_hash_problem(const std::string& library) {
  std::ifstream in(hash_file_of(library));
  std::string expected;
  if (!(in >> expected)) return "no content hash recorded beside it";
  std::string actual;
  try {
    actual = sha256_file(library);
  } catch (const Error& e) {
    return e.what();
  }
  if (actual != expected) return "its bytes changed since it was built (content hash mismatch)";
  return "";
}

void check_cache_dir_is_private(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return;  // created by ensure_dir, mode 0700
  const std::string fix = "use a folder of your own: TCPROF_CACHE_DIR=$HOME/.cache/tcprof, or fix it "
                          "with chown/chmod go-w";
  if (st.st_uid != ::geteuid()) {
    throw Error(ErrorKind::Input,
                fmt::format("kernel cache '{}' belongs to another user (uid {}): tcprof loads and runs "
                            "the libraries it finds there, so it refuses a cache it does not own; {}",
                            dir, st.st_uid, fix));
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    throw Error(ErrorKind::Input,
                fmt::format("kernel cache '{}' is writable by {} (mode {:o}): tcprof loads and runs the "
                            "libraries it finds there, so it refuses a cache others can change; {}",
                            dir, (st.st_mode & S_IWOTH) ? "every user" : "its group",
                            st.st_mode & 07777, fix));
  }
}

namespace {

// The writer's pid in "<name>.tmp.<pid>.<n>", or 0 when `name` is not one of ours.
pid_t temp_writer(const std::string& name) {
  auto at = name.rfind(".tmp.");
  if (at == std::string::npos) return 0;
  std::string rest = name.substr(at + 5);
  auto dot = rest.find('.');
  if (dot == std::string::npos || dot == 0) return 0;
  pid_t pid = 0;
  for (size_t i = 0; i < dot; ++i) {
    if (rest[i] < '0' || rest[i] > '9') return 0;
    pid = pid * 10 + (rest[i] - '0');
  }
  return pid;
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

int remove_stale_temporaries(const std::string& kernels_dir) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator shard(kernels_dir, ec), end; !ec && shard != end; shard.increment(ec)) {
    if (!shard->is_directory(ec)) continue;
    for (fs::directory_iterator f(shard->path(), ec); !ec && f != end; f.increment(ec)) {
      pid_t writer = temp_writer(f->path().filename().string());
      if (writer > 0 && writer != ::getpid() && process_gone(writer) && fs::remove(f->path(), ec)) {
        ++removed;
      }
    }
    ec.clear();
  }
  return removed;
}

}  // namespace tcprof
