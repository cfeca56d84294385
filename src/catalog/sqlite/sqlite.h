// A thin RAII layer over the SQLite C API, private to the catalog room.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace quarry::catalog {

// Throws quarry::Error for a failed SQLite call: busy/locked -> busy, interrupted by the
// thread's deadline -> timeout, else internal with SQLite's message.
[[noreturn]] void throw_sqlite(sqlite3* db, int rc, std::string_view what);

// Prepared statements of one connection kept for reuse: preparing (parsing and planning) was
// about a sixth of a vector search's time. Only for SQL whose text never varies (literals and
// fixed column lists); SQL built around its values (filters, IN lists) is prepared each time.
// Bounded: past kMax distinct texts, statements are finalized after use instead of kept.
class StmtCache {
 public:
  // Where a text's kept statement lives (stable while the cache lives); null when the
  // cache is full.
  using Slot = std::pair<const std::string, sqlite3_stmt*>;

  explicit StmtCache(sqlite3* db) : db_(db) {}
  ~StmtCache() { clear(); }
  StmtCache(const StmtCache&) = delete;
  StmtCache& operator=(const StmtCache&) = delete;

  sqlite3* db() const { return db_; }
  // A statement for `sql`: the kept one (taken out while in use, so a nested use of the
  // same text prepares its own) or a new one. Throws like Stmt.
  sqlite3_stmt* take(std::string_view sql, Slot*& slot);
  // Back from use: reset (which ends its read) and kept in its slot, or finalized.
  void give(Slot* slot, sqlite3_stmt* st);
  void clear();  // finalizes every kept statement (before the connection closes)
  std::size_t size() const { return kept_.size(); }
  std::size_t prepared() const { return prepared_; }  // statements prepared so far

  static constexpr std::size_t kMax = 128;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*, Hash, std::equal_to<>> kept_;
  std::size_t prepared_ = 0;
};

class Stmt {
 public:
  Stmt(sqlite3* db, std::string_view sql);
  // From `cache`, given back to it when done; `sql` must be text that never varies.
  Stmt(StmtCache& cache, std::string_view sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& o) noexcept : db_(o.db_), st_(o.st_), cache_(o.cache_), slot_(o.slot_) {
    o.st_ = nullptr;
  }

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
  StmtCache* cache_ = nullptr;
  StmtCache::Slot* slot_ = nullptr;
};

void exec_sql(sqlite3* db, const char* sql);

// Opens (creating if needed) a database for one thread of use, in WAL mode with synchronous
// NORMAL (a killed process loses nothing committed) and a 10 s busy timeout. Its statements are
// interrupted once the calling thread's deadline (quarry/deadline.h) has passed, checked every
// kProgressSteps VM steps; throw_sqlite turns that into Error(timeout). Throws Error(io_error)
// naming `what` and the path.
inline constexpr int kProgressSteps = 1000;
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

// BEGIN ... COMMIT around a group of reads (a search): they see one snapshot of the database
// and take SQLite's file locks once instead of once per statement, which matters while another
// connection commits often (a background sweep). Inside a transaction already, nothing.
class ReadTransaction {
 public:
  explicit ReadTransaction(sqlite3* db);
  ~ReadTransaction();
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  sqlite3* db_;
  bool owns_;
};

}  // namespace quarry::catalog
