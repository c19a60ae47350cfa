// Generated C++ → loaded shared library. Runs the system C++ compiler (no shell, with a timeout),
// keeps the result in a content-addressed cache (<cache_dir>/kernels/<k[0:2]>/<k>.so, with <k>.cpp
// beside it for people debugging a kernel) and dlopens it. Writes are atomic (temp name + rename),
// so concurrent processes sharing a cache only ever see complete files; each library's content hash
// is checked before it is loaded (see cache_files.h). Never links LibTorch.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/toolchain/cpu_features.h"
#include "core/error.h"

namespace tcprof {

// The compiler is missing, times out or rejects the source, or the result does not load.
// what() is one line for the user; output() is the compiler's full message.
class KernelLibraryError : public Error {
 public:
  KernelLibraryError(std::string msg, std::string output)
      : Error(ErrorKind::Internal, msg), output_(std::move(output)) {}
  const std::string& output() const { return output_; }

 private:
  std::string output_;
};

// A dlopen'ed shared library; dlclose in the destructor (function pointers die with it).
class LoadedLibrary {
 public:
  // dlopen(path, RTLD_NOW | RTLD_LOCAL); throws KernelLibraryError with dlerror() on failure.
  static std::shared_ptr<LoadedLibrary> open(const std::string& path);
  LoadedLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  ~LoadedLibrary();
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;

  void* symbol(const std::string& name) const;  // throws KernelLibraryError if missing
  const std::string& path() const { return path_; }

 private:
  void* handle_;
  std::string path_;
};

struct KernelLibraryResult {
  std::shared_ptr<LoadedLibrary> library;
  std::string key;          // hex content hash
  bool cache_hit = false;   // true when no compiler ran (disk or in-process hit)
  double compile_s = 0;     // wall time of the compiler process (0 on hit)
};

struct KernelLibraryOptions {
  std::string compiler;                  // empty: $TCPROF_CXX, else $CXX, else "c++"; may carry
                                         // leading words ("ccache g++")
  std::string cache_dir;                 // empty: $TCPROF_CACHE_DIR, else $XDG_CACHE_HOME/tcprof,
                                         // else $HOME/.cache/tcprof
  std::vector<std::string> extra_flags;  // appended
  bool openmp = true;
  double timeout_s = 300;                // the compiler process group is killed after this
};

class KernelLibraryBuilder {
 public:
  explicit KernelLibraryBuilder(KernelLibraryOptions options = {});

  // Compiles `source` (a whole translation unit) into a shared library, or finds it in the cache,
  // and loads it. Thread-safe; two threads asking for the same new source compile it once.
  // Throws KernelLibraryError when compiling fails, Error(Input) when the cache folder is unsafe.
  KernelLibraryResult compile(const std::string& source);

  const std::vector<std::string>& flags() const { return flags_; }  // the full flag list (in the key)
  const std::string& cache_dir() const { return cache_dir_; }
  const std::string& compiler() const { return compiler_; }  // as resolved from options/environment

  static KernelLibraryBuilder& shared();  // process-wide instance with default options

 private:
  KernelLibraryResult load_or_build(const std::string& source, const std::string& key,
                                    const std::string& so_path);
  double run_compiler(const std::string& cpp_path, const std::string& out_path);
  // Once per builder: refuse a cache folder others own or can write, sweep dead temporaries.
  void prepare_cache_dir();

  KernelLibraryOptions options_;
  std::string compiler_;
  std::vector<std::string> compiler_words_;  // compiler_ split on spaces
  std::string cache_dir_;
  std::vector<std::string> flags_;
  std::once_flag cache_prepared_;
};

}  // namespace tcprof
