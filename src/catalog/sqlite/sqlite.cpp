#include "catalog/sqlite/sqlite.h"

#include "quarry/deadline.h"
#include "quarry/error.h"

namespace quarry::catalog {

void throw_sqlite(sqlite3* db, int rc, std::string_view what) {
  std::string msg = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  int primary = rc & 0xff;
  // Interrupted by the progress handler below: the calling thread's deadline has passed.
  if (primary == SQLITE_INTERRUPT) check_deadline();
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
    throw Error(Code::busy, "the catalog is busy (" + msg + "); retry in a moment");
  if (primary == SQLITE_FULL || primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN ||
      primary == SQLITE_READONLY)
    throw Error(Code::io_error, "catalog I/O error: " + msg);
  throw Error(Code::internal, "catalog error: " + msg);
}

Stmt::Stmt(sqlite3* db, std::string_view sql) : db_(db) {
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &st_, nullptr);
  if (rc != SQLITE_OK) throw_sqlite(db, rc, "prepare");
}

Stmt::Stmt(StmtCache& cache, std::string_view sql) : db_(cache.db()), cache_(&cache) {
  st_ = cache.take(sql, slot_);  // in the body: slot_ is initialised after st_
}

Stmt::~Stmt() {
  if (cache_ && st_)
    cache_->give(slot_, st_);
  else
    sqlite3_finalize(st_);
}

sqlite3_stmt* StmtCache::take(std::string_view sql, Slot*& slot) {
  auto it = kept_.find(sql);
  if (it == kept_.end() && kept_.size() < kMax) it = kept_.emplace(sql, nullptr).first;
  slot = it == kept_.end() ? nullptr : &*it;
  if (slot && slot->second) return std::exchange(slot->second, nullptr);
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &st, nullptr);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, "prepare");
  ++prepared_;
  return st;
}

void StmtCache::give(Slot* slot, sqlite3_stmt* st) {
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (slot && !slot->second)
    slot->second = st;
  else
    sqlite3_finalize(st);  // a second copy of a text in use at once, or the cache is full
}

void StmtCache::clear() {
  for (auto& [sql, st] : kept_) sqlite3_finalize(st);  // null for a text in use: harmless
  kept_.clear();
}

Stmt& Stmt::bind(int i, std::int64_t v) {
  sqlite3_bind_int64(st_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  sqlite3_bind_double(st_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, std::string_view v) {
  sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  sqlite3_bind_null(st_, i);
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sqlite(db_, rc, "step");
}

void Stmt::reset() {
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

std::string Stmt::str(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(st_, col)))
           : std::string();
}

std::optional<std::string> Stmt::opt_str(int col) const {
  if (is_null(col)) return std::nullopt;
  return str(col);
}

void exec_sql(sqlite3* db, const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : "";
    sqlite3_free(err);
    throw_sqlite(db, rc, msg);
  }
}

Transaction::Transaction(sqlite3* db) : db_(db), nested_(sqlite3_get_autocommit(db) == 0) {
  // Inside an outer transaction (Catalog::Batch) a savepoint: it commits with the outer one.
  exec_sql(db, nested_ ? "SAVEPOINT nested" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (done_) return;
  if (nested_) {
    sqlite3_exec(db_, "ROLLBACK TO nested", nullptr, nullptr, nullptr);
    sqlite3_exec(db_, "RELEASE nested", nullptr, nullptr, nullptr);
  } else {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Transaction::commit() {
  exec_sql(db_, nested_ ? "RELEASE nested" : "COMMIT");
  done_ = true;
}

ReadTransaction::ReadTransaction(sqlite3* db) : db_(db), owns_(sqlite3_get_autocommit(db) != 0) {
  if (owns_) exec_sql(db, "BEGIN");
}

ReadTransaction::~ReadTransaction() {
  // A read-only transaction: ending it can only fail if something inside wrote and the write
  // cannot commit, in which case it rolls back like any failed statement.
  if (owns_ && sqlite3_get_autocommit(db_) == 0 &&
      sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

sqlite3* open_wal_database(const std::string& path, const std::string& what) {
  // Before SQLite's first use in the process: no allocation statistics, which otherwise take
  // one process-wide mutex around every allocation, so that a background sweep's connection
  // and a search's contend on it (measured: docs/benchmarks.md). Refused harmlessly once
  // SQLite is initialised.
  static const int memstatus_off = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)memstatus_off;
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    throw Error(Code::io_error, "cannot open " + what + " " + path + ": " + msg);
  }
  // Writers queue on SQLite's lock for up to 10 s (the data-dir writer lock is the outer gate);
  // readers never wait in WAL mode.
  sqlite3_busy_timeout(db, 10000);
  // Every statement stops once the calling thread's deadline (quarry/deadline.h) has passed;
  // without one the handler is one thread-local read per ~thousand VM steps.
  sqlite3_progress_handler(
      db, kProgressSteps, [](void*) -> int { return deadline_passed() ? 1 : 0; }, nullptr);
  try {
    exec_sql(db, "PRAGMA journal_mode = WAL");
    // NORMAL in WAL mode: a killed process loses nothing committed; only an OS crash or power
    // loss can drop the last transactions, and never corrupts.
    exec_sql(db, "PRAGMA synchronous = NORMAL");
    // Pages read through a shared memory map instead of a pread copy each, and a larger page
    // cache: a sweep's commits and a search's reads both touch the same hot pages.
    exec_sql(db, "PRAGMA mmap_size = 268435456");
    exec_sql(db, "PRAGMA cache_size = -32768");
  } catch (...) {
    sqlite3_close(db);
    throw;
  }
  return db;
}

}  // namespace quarry::catalog
