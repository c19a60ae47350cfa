// Helpers shared by tests: temporary directories that clean up after themselves.
#pragma once
#include <filesystem>
#include <string>

namespace tcprof::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Runs a shell command line, capturing stdout (and stderr when `merge_stderr`).
struct CommandResult {
  int exit_code = -1;
  std::string output;
};
CommandResult run_command(const std::string& command_line, bool merge_stderr = false);

std::string read_file(const std::string& path);
// The rows of `sql` on the database at `path`, as the sqlite3 shell prints them (columns joined by
// '|', one line per row): without depending on that shell, which a GPU machine may lack.
std::string query_db(const std::string& path, const std::string& sql);

// `gz` decompressed into `dir` (gzip -dc); returns the new file's path. Throws when gzip fails.
std::string gunzip_into(const std::string& gz, const TempDir& dir);

// Every occurrence of `from` replaced by `to` (paths in golden output).
std::string replace_all(std::string s, const std::string& from, const std::string& to);

}  // namespace tcprof::testing
