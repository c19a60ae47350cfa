#include "compiler/toolchain/cubin_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "compiler/toolchain/cache_files.h"
#include "core/log.h"
#include "core/sha256.h"

namespace tcprof {
namespace {

// Changed whenever what a key covers changes.
constexpr const char* kCubinKeyVersion = "tcprof cubin v2 fmad=false";

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

CachedCubin cached_cubin(const NvrtcCompiler& nvrtc, const std::string& source, const std::string& arch,
                         const std::string& cache_dir) {
  CachedCubin out;
  std::string material = kCubinKeyVersion;
  for (const std::string& part : {arch, nvrtc.version(), source}) material += fmt::format("\n{}:{}", part.size(), part);
  out.key = sha256_hex(material);
  const std::string root = cache_dir + "/cubins";
  check_cache_dir_is_private(cache_dir);
  ensure_dir(root);
  check_cache_dir_is_private(root);
  const std::string shard = root + "/" + out.key.substr(0, 2);
  const std::string path = shard + "/" + out.key + ".cubin";
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    std::string problem = elf_problem(path);
    if (problem.empty()) problem = library_hash_problem(path);
    if (problem.empty()) {
      out.cubin = read_all(path);
      out.cache_hit = true;
      log(LogChannel::OutputCode, "kernel cache: hit {}", path);
      return out;
    }
    fmt::print(stderr, "tcprof: kernel cache: {} is damaged ({}); rebuilding it\n", path, problem);
    ::unlink(path.c_str());
    ::unlink(hash_file_of(path).c_str());
  }
  CubinResult built = nvrtc.compile(source, arch);
  out.cubin = std::move(built.cubin);
  out.compile_s = built.compile_s;
  ensure_dir(shard);
  write_file_atomic(shard + "/" + out.key + ".cu", source);  // for people reading a kernel
  TempFile tmp(temp_name(path));
  {
    std::ofstream f(tmp.path(), std::ios::binary);
    f.write(out.cubin.data(), static_cast<std::streamsize>(out.cubin.size()));
    if (!f) throw Error(ErrorKind::Input, fmt::format("cannot write {}: check free space and permissions of the kernel cache", tmp.path()));
  }
  write_library_hash(tmp.path(), path);
  tmp.commit_to(path);
  log(LogChannel::OutputCode, "kernel cache: compiled {} in {:.2f}s", path, out.compile_s);
  return out;
}

}  // namespace tcprof
