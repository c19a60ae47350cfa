// Files that are not tcprof databases give one clear error naming the file and the problem.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include <sqlite3.h>

#include "core/error.h"
#include "core/run_reader.h"
#include "core/run_writer.h"
#include "core/schema.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::TempDir;

std::string reader_error(const std::string& path) {
  try {
    RunReader r(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    return e.what();
  }
  return "";
}

void sql(const std::string& path, const char* statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, statement, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

TEST(StoreBadFiles, MissingFile) {
  TempDir dir;
  std::string msg = reader_error(dir.file("nope.db"));
  EXPECT_NE(msg.find("nope.db"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
}

TEST(StoreBadFiles, NotSqlite) {
  TempDir dir;
  std::string path = dir.file("model.pt");
  std::ofstream(path) << "PK\x03\x04 this is a zip, not a database, and it is long enough to "
                         "have a header of one hundred bytes ............................";
  std::string msg = reader_error(path);
  EXPECT_NE(msg.find("model.pt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not an SQLite file"), std::string::npos) << msg;
  // The writer refuses it too instead of overwriting a user's file.
  RunInfo info;
  info.command = "t";
  EXPECT_THROW(RunWriter(path, info), Error);
}

TEST(StoreBadFiles, SqliteWithoutTcprofSchema) {
  TempDir dir;
  std::string path = dir.file("other.db");
  sql(path, "CREATE TABLE users(id INTEGER, name TEXT)");
  std::string msg = reader_error(path);
  EXPECT_NE(msg.find("not a tcprof database"), std::string::npos) << msg;
  RunInfo info;
  info.command = "t";
  EXPECT_THROW(RunWriter(path, info), Error);
}

TEST(StoreBadFiles, EmptySqliteFile) {
  TempDir dir;
  std::string path = dir.file("empty.db");
  sql(path, "PRAGMA user_version=0");
  std::string msg = reader_error(path);
  EXPECT_NE(msg.find("no tcprof runs"), std::string::npos) << msg;
}

TEST(StoreBadFiles, NewerSchemaVersion) {
  TempDir dir;
  std::string path = dir.file("future.db");
  {
    RunInfo info;
    info.command = "t";
    RunWriter w(path, info);
  }
  sql(path, ("UPDATE meta SET value='" + std::to_string(kSchemaVersion + 1) +
             "' WHERE key='schema_version'").c_str());
  std::string msg = reader_error(path);
  EXPECT_NE(msg.find("newer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("upgrade tcprof"), std::string::npos) << msg;
  RunInfo info;
  info.command = "t";
  EXPECT_THROW(RunWriter(path, info), Error);
}

TEST(StoreBadFiles, UnwritableLocation) {
  TempDir dir;
  RunInfo info;
  info.command = "t";
  // A path below a regular file can never be created, even as root.
  std::string blocker = dir.file("plainfile");
  std::ofstream(blocker) << "x";
  try {
    RunWriter w(blocker + "/run.db", info);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("plainfile/run.db"), std::string::npos) << e.what();
  }
  if (geteuid() != 0) {  // permissions do not bind root
    std::filesystem::create_directory(dir.file("ro"));
    std::filesystem::permissions(dir.file("ro"), std::filesystem::perms::owner_read |
                                                     std::filesystem::perms::owner_exec);
    EXPECT_THROW(RunWriter(dir.file("ro") + "/run.db", info), Error);
  }
}

TEST(StoreBadFiles, ReadOnlyDatabaseFileIsReadable) {
  TempDir dir;
  std::string path = dir.file("ro.db");
  {
    RunInfo info;
    info.command = "t";
    RunWriter w(path, info);
  }
  std::filesystem::permissions(path, std::filesystem::perms::owner_read);
  RunReader r(path);
  EXPECT_EQ(r.runs().size(), 1u);
}

}  // namespace
}  // namespace tcprof
