// A thin RAII layer over the SQLite C API, private to the catalog room.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace quarry::catalog {

// Throws quarry::Error for a failed SQLite call: busy/locked -> busy, else internal with
// SQLite's message.
[[noreturn]] void throw_sqlite(sqlite3* db, int rc, std::string_view what);

class Stmt {
 public:
  Stmt(sqlite3* db, std::string_view sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& o) noexcept : db_(o.db_), st_(o.st_) { o.st_ = nullptr; }

  Stmt& bind(int i, std::int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind_null(int i);
  Stmt& bind(int i, const std::optional<std::string>& v) { return v ? bind(i, *v) : bind_null(i); }

  // True while a row is available.
  bool step();
  void exec() { step(); }
  void reset();

  std::int64_t i64(int col) const { return sqlite3_column_int64(st_, col); }
  double f64(int col) const { return sqlite3_column_double(st_, col); }
  std::string str(int col) const;
  std::optional<std::string> opt_str(int col) const;
  bool is_null(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }
  sqlite3_stmt* raw() { return st_; }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

void exec_sql(sqlite3* db, const char* sql);

// Opens (creating if needed) a database for one thread of use, in WAL mode with synchronous
// NORMAL (a killed process loses nothing committed) and a 10 s busy timeout. Throws
// Error(io_error) naming `what` and the path.
sqlite3* open_wal_database(const std::string& path, const std::string& what);

// BEGIN IMMEDIATE ... COMMIT, rolled back unless commit() was called. Inside another
// transaction it is a savepoint of it.
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  ~Transaction();
  void commit();

 private:
  sqlite3* db_;
  bool nested_;
  bool done_ = false;
};

}  // namespace quarry::catalog
