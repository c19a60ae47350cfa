#include "tests/test_support.h"

#include <sys/wait.h>

#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tcprof::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tcprof-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

CommandResult run_command(const std::string& command_line, bool merge_stderr) {
  std::string cmd = command_line + (merge_stderr ? " 2>&1" : "");
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed");
  CommandResult result;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.output.append(buf, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string gunzip_into(const std::string& gz, const TempDir& dir) {
  std::string name = std::filesystem::path(gz).filename().string();
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0) name.resize(name.size() - 3);
  const std::string out = dir.file(name);
  const CommandResult r = run_command("gzip -dc '" + gz + "' > '" + out + "'", true);
  if (r.exit_code != 0) throw std::runtime_error("gzip -dc " + gz + " failed: " + r.output);
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

std::string query_db(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw std::runtime_error("query_db: cannot open " + path + ": " + why);
  }
  std::string out;
  char* error = nullptr;
  auto row = [](void* text, int columns, char** values, char**) {
    std::string& o = *static_cast<std::string*>(text);
    for (int c = 0; c < columns; ++c) o += std::string(c ? "|" : "") + (values[c] ? values[c] : "");
    o += "\n";
    return 0;
  };
  int rc = sqlite3_exec(db, sql.c_str(), row, &out, &error);
  std::string why = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error("query_db: " + sql + ": " + why);
  return out;
}

}  // namespace tcprof::testing
