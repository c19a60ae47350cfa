#include "tests/fuzzers/harness_support.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tcprof::fuzzers {
namespace {

// Removed with everything in it when the process ends.
struct WorkDir {
  std::string path;
  WorkDir() {
    std::string pattern = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/tcprof-fuzz-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~WorkDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

const std::string& work_dir() {
  static const WorkDir dir;
  return dir.path;
}

}  // namespace

std::string write_input(const std::string& name, std::string_view bytes) {
  std::string path = work_dir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  return write_input(name, std::string_view(reinterpret_cast<const char*>(data), size));
}

std::string fresh_path(const std::string& name) {
  std::string path = work_dir() + "/" + name;
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove_all(path + suffix, ec);
  return path;
}

}  // namespace tcprof::fuzzers
