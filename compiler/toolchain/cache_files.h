// The files of the kernel cache: atomic writes, the content hash that guards each library, the
// checks that keep a shared or damaged cache from running foreign or broken code, and the sweep of
// temporaries left by killed processes.
#pragma once
#include <string>

namespace tcprof {

// mkdir -p, each directory it creates mode 0700; existing directories are left as they are.
// Throws KernelLibraryError naming the path.
void ensure_dir(const std::string& dir);

// A unique name beside `final_path`: <final_path>.tmp.<pid>.<n>. The pid lets a later process
// tell a live writer's temporary from one whose writer was killed.
std::string temp_name(const std::string& final_path);

// Removes a temp file unless it was renamed into place.
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) {}
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  void commit_to(const std::string& final_path);  // rename; throws KernelLibraryError

 private:
  std::string path_;
};

// Writes `data` to a temporary beside `path`, then renames it into place.
void write_file_atomic(const std::string& path, const std::string& data);

// dlopen maps segments without checking that the file holds them, and touching a page past the
// end of a truncated file is SIGBUS. "" when the ELF headers say the file is whole, else why not.
std::string elf_problem(const std::string& path);

// <library>.sha256 beside a library holds the SHA-256 of its bytes, written before the library
// is moved into place. A library whose bytes changed since (a zeroed page of the same size,
// a hand edit) must never be dlopen'ed: the check below reads it whole and compares.
std::string hash_file_of(const std::string& library);
void write_library_hash(const std::string& library_to_hash, const std::string& final_library);
// "" when the library matches its recorded hash, else why not (no hash, mismatch, unreadable).
std::string library_hash_problem(const std::string& library);

// The cache holds code tcprof will load and run: a folder another user owns or can write to
// could hand it a library of theirs. Throws Error(Input) naming the folder and the fix.
void check_cache_dir_is_private(const std::string& dir);

// Deletes <kernels_dir>/*/*.tmp.<pid>.<n> whose process no longer exists (a writer killed
// mid-write). Returns how many were removed.
int remove_stale_temporaries(const std::string& kernels_dir);

}  // namespace tcprof
