// A thin RAII layer over the SQLite C API: a connection and prepared statements with bound
// parameters. Every SQL statement in tcprof goes through here; values are never spliced into SQL.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace tcprof {

class Statement;

class Database {
 public:
  enum class Mode { ReadOnly, ReadWriteCreate };
  // Throws tcprof::Error(Input) naming the file when it cannot be opened.
  Database(const std::string& path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(const std::string& sql);  // for DDL and pragmas without parameters
  Statement prepare(std::string_view sql);
  int64_t last_insert_rowid() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  // Human-readable description of the last error, prefixed by the file.
  std::string error_message(const std::string& what) const;
  // SQLite's primary result code of the last failed call (SQLITE_BUSY, SQLITE_NOTADB, ...).
  int error_code() const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;

  // Binding is 1-based like SQLite. Text is bound without copying: the caller keeps it alive
  // until step().
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  // A temporary string would be gone before step() reads it (fuzzing found one: the status of a
  // run written as whatever was left on the stack): name it first.
  Statement& bind(int index, std::string&& value) = delete;
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind_null(int index);
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  bool step();    // true while a row is available
  void run();     // step to completion, then reset
  void reset();   // ready for new bindings
  // Steps once and resets, keeping the bindings: for hot loops that rebind every parameter.
  void execute();

  int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  // Valid until the next step(); for hot loops that only compare or copy.
  std::string_view text_view(int column) const;
  bool is_null(int column) const;

 private:
  Database* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Begins an IMMEDIATE transaction and rolls it back unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace tcprof
