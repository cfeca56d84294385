// libpq connections for the pgvector store: a result wrapper, statement execution that turns
// server errors into quarry::Error, and a small blocking pool.
//
// Why a pool of our own: the store is called from many threads (ingest workers, queries); libpq
// connections are not thread-safe, and opening one per call costs a TCP + auth round trip. The
// pool hands a connection to one caller at a time (Lease), opens them lazily up to `size`, and
// replaces a connection libpq reports broken, so a restarted server or a dropped socket costs
// one failed call at most (the store retries a call of its own once on a lost connection).
// It works with size 1, which PGlite needs (it serves one connection, shared backend state).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <libpq-fe.h>

namespace quarry::store::pgvector {

// Error detail key set on errors caused by a lost connection (the call may be retried).
inline constexpr const char* kConnectionLost = "pg_connection_lost";

class PgResult {
 public:
  explicit PgResult(PGresult* r) : r_(r, &PQclear) {}
  int rows() const { return PQntuples(r_.get()); }
  bool is_null(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  std::string value(int row, int col) const { return PQgetvalue(r_.get(), row, col); }
  long affected() const;  // rows an INSERT/UPDATE/DELETE touched

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> r_;
};

// Runs one statement; parameters go as text with the types the SQL casts them to. Throws
// Error(upstream_error) with the server's message and SQLSTATE (detail "sqlstate"), or
// Error(engine_unavailable) with detail kConnectionLost when the connection broke.
PgResult exec(PGconn* conn, const std::string& sql, const std::vector<std::string>& params = {});
// The same with a format per parameter: 1 sends that value in the type's binary form (e.g. a
// vector as pgvector's vector_recv reads it), 0 as text.
PgResult exec(PGconn* conn, const std::string& sql, const std::vector<std::string>& params,
              const std::vector<int>& formats);

// "database 'x' on host:port": names a server in messages without the DSN (it may hold a password).
std::string describe(PGconn* conn);

class PgPool {
 public:
  struct Options {
    int size = 4;
    int acquire_timeout_ms = 60000;
    bool reset_on_connect = true;
  };
  PgPool(std::string dsn, Options options);
  ~PgPool();

  class Lease {
   public:
    Lease(PgPool* pool, PGconn* conn) : pool_(pool), conn_(conn) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), conn_(o.conn_) { o.conn_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    PGconn* get() const { return conn_; }

   private:
    PgPool* pool_;
    PGconn* conn_;
  };

  // Blocks until a connection is free (Error(busy) after acquire_timeout_ms); connects when
  // none is idle and fewer than `size` exist. Error(engine_unavailable) when connecting fails.
  Lease acquire();
  // Test seam: shuts down the sockets of idle connections, as a server restart would.
  void break_idle_connections_for_test();

 private:
  void release(PGconn* conn);
  PGconn* connect();

  std::string dsn_;
  Options options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<PGconn*> idle_;
  int open_ = 0;
};

}  // namespace quarry::store::pgvector
