#include "core/store_open.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/schema.h"
#include "core/sqlite_db.h"

namespace tcprof {
namespace {

std::string folder_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Why a file cannot be created in `folder`, for the user: the folder is missing or not writable.
Error folder_error(const std::string& path, const std::string& folder, int err) {
  if (err == ENOENT) {
    return Error(ErrorKind::Input, fmt::format("cannot create database '{}': the folder '{}' does "
                                               "not exist (create it or choose another --db)",
                                               path, folder));
  }
  return Error(ErrorKind::Input,
               fmt::format("cannot create database '{}': the folder '{}' is not writable ({}); "
                           "choose another --db",
                           path, folder, std::strerror(err)));
}

void configure_for_writing(Database& db) {
  db.exec("PRAGMA journal_mode=WAL");
  db.exec("PRAGMA synchronous=NORMAL");
  db.exec("PRAGMA cache_size=-65536");  // 64 MiB: batches of kernel rows stay in memory
}

// Builds a complete database under a private name and links it to `path`. Returns normally when
// `path` exists afterwards, whoever made it; false when this filesystem has no hard links.
bool create_by_link(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  const std::string folder = folder_of(path);
  const std::string temp = fmt::format("{}/.{}.creating.{}.{}", folder, base_of(path), ::getpid(),
                                       counter.fetch_add(1));
  struct Cleanup {
    const std::string& temp;
    ~Cleanup() {
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((temp + suffix).c_str());
    }
  } cleanup{temp};
  if (::access(folder.c_str(), W_OK) != 0) throw folder_error(path, folder, errno);
  {
    Database db(temp, Database::Mode::ReadWriteCreate);
    configure_for_writing(db);
    create_or_validate_schema(db);
  }  // closing the only connection checkpoints the WAL into the file
  if (::link(temp.c_str(), path.c_str()) == 0 || errno == EEXIST) return true;
  if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == EXDEV) return false;
  throw folder_error(path, folder, errno);
}

Error open_error(const std::string& path, Database& db, const Error& cause) {
  switch (db.error_code()) {
    case SQLITE_NOTADB:
      return Error(ErrorKind::Input,
                   fmt::format("cannot write database '{}': the file exists and is not an SQLite "
                               "database (choose another --db, or move the file away)",
                               path));
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
      return Error(ErrorKind::Input,
                   fmt::format("cannot write database '{}': the file or its folder is not "
                               "writable ({})",
                               path, cause.what()));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Error(ErrorKind::Input,
                   fmt::format("cannot write database '{}': another process kept it locked for "
                               "10 s ({}); try again when it finishes",
                               path, cause.what()));
    default:
      return Error(ErrorKind::Input, fmt::format("cannot write database '{}': {}", path, cause.what()));
  }
}

}  // namespace

std::unique_ptr<Database> open_store_for_writing(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) throw folder_error(path, folder_of(path), errno);
    create_by_link(path);
  }
  auto db = std::make_unique<Database>(path, Database::Mode::ReadWriteCreate);
  // The WAL switch and the schema check take locks that SQLite's busy handler does not always
  // wait for (a lock upgrade that could deadlock returns SQLITE_BUSY at once): retry here.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int attempt = 0;; ++attempt) {
    try {
      configure_for_writing(*db);
      create_or_validate_schema(*db);
      return db;
    } catch (const Error& e) {
      int code = db->error_code();
      bool busy = code == SQLITE_BUSY || code == SQLITE_LOCKED;
      if (!busy || std::chrono::steady_clock::now() > deadline) {
        if (code == SQLITE_OK) throw;  // a schema error: it already names the file and the cause
        throw open_error(path, *db, e);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5 << std::min(attempt, 5), 100)));
    }
  }
}

}  // namespace tcprof
