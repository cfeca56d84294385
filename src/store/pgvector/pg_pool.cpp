// libpq execution and the connection pool of the pgvector store. See pg_pool.h.
#include "store/pgvector/pg_pool.h"

#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "quarry/error.h"

namespace quarry::store::pgvector {

long PgResult::affected() const {
  const char* n = PQcmdTuples(r_.get());
  return n && *n ? std::strtol(n, nullptr, 10) : 0;
}

std::string describe(PGconn* conn) {
  const char* db = PQdb(conn);
  const char* host = PQhost(conn);
  const char* port = PQport(conn);
  return "database '" + std::string(db ? db : "?") + "' on " + (host ? host : "?") + ":" +
         (port ? port : "?");
}

PgResult exec(PGconn* conn, const std::string& sql, const std::vector<std::string>& params) {
  return exec(conn, sql, params, {});
}

PgResult exec(PGconn* conn, const std::string& sql, const std::vector<std::string>& params,
              const std::vector<int>& formats) {
  std::vector<const char*> values;
  std::vector<int> lengths;
  values.reserve(params.size());
  lengths.reserve(params.size());
  for (const auto& p : params) {
    values.push_back(p.c_str());
    lengths.push_back(static_cast<int>(p.size()));
  }
  const bool binary = !formats.empty();
  PGresult* r =
      params.empty() && sql.find('$') == std::string::npos
          ? PQexec(conn, sql.c_str())
          : PQexecParams(conn, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                         binary ? lengths.data() : nullptr, binary ? formats.data() : nullptr, 0);
  PgResult result(r);
  auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  if (PQstatus(conn) == CONNECTION_BAD || !r)
    throw Error(Code::engine_unavailable,
                "lost the connection to PostgreSQL (" + describe(conn) +
                    "): " + PQerrorMessage(conn) + "; check that the server is running",
                {{kConnectionLost, "true"}, {"store", "pgvector"}});
  const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  throw Error(Code::upstream_error,
              "PostgreSQL refused a pgvector store statement (" + describe(conn) +
                  "): " + PQresultErrorMessage(r),
              {{"sqlstate", state ? state : ""}, {"store", "pgvector"}});
}

PgPool::PgPool(std::string dsn, Options options) : dsn_(std::move(dsn)), options_(options) {}

PgPool::~PgPool() {
  for (PGconn* c : idle_) PQfinish(c);
}

PgPool::Lease::~Lease() {
  if (conn_) pool_->release(conn_);
}

namespace {
void ignore_notice(void*, const char*) {}  // server notices are not errors; keep stderr clean
}  // namespace

PGconn* PgPool::connect() {
  // A few quick retries: a server that just closed our previous connection may still refuse a
  // new one for a moment (PGlite serves one connection and frees it asynchronously), and a
  // restarting server comes back within a second or so.
  PGconn* c = nullptr;
  for (int attempt = 0, delay_ms = 50;; ++attempt, delay_ms *= 2) {
    c = PQconnectdb(dsn_.c_str());
    if (PQstatus(c) == CONNECTION_OK || attempt == 5) break;
    PQfinish(c);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  }
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(c);
    std::string where = describe(c);
    PQfinish(c);
    throw Error(Code::engine_unavailable,
                "cannot connect to PostgreSQL (" + where + "): " + msg +
                    "; check the DSN secret of the pgvector store and that the server runs",
                {{"store", "pgvector"}});
  }
  PQsetNoticeProcessor(c, ignore_notice, nullptr);
  try {
    // PGlite shares one backend session among its connections: drop what a previous client
    // (or a broken connection of ours) left open. Harmless on a fresh real session.
    if (options_.reset_on_connect) {
      PQclear(PQexec(c, "ROLLBACK"));
      exec(c, "DISCARD ALL");
    }
    exec(c, "SET client_min_messages = warning");
  } catch (...) {
    PQfinish(c);
    throw;
  }
  return c;
}

PgPool::Lease PgPool::acquire() {
  std::unique_lock lock(mu_);
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.acquire_timeout_ms);
  while (idle_.empty() && open_ >= options_.size) {
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        open_ >= options_.size)
      throw Error(Code::busy,
                  "every pgvector connection stayed busy for " +
                      std::to_string(options_.acquire_timeout_ms) +
                      " ms; raise the store's pool_size or acquire_timeout_ms",
                  {{"store", "pgvector"}});
  }
  if (!idle_.empty()) {
    PGconn* c = idle_.back();
    idle_.pop_back();
    if (PQstatus(c) == CONNECTION_OK) return Lease(this, c);
    PQfinish(c);  // broken while idle: replace it below
    --open_;
  }
  ++open_;
  lock.unlock();
  try {
    return Lease(this, connect());
  } catch (...) {
    std::lock_guard relock(mu_);
    --open_;
    cv_.notify_one();
    throw;
  }
}

void PgPool::release(PGconn* conn) {
  std::lock_guard lock(mu_);
  // A connection left inside a transaction (an exception between BEGIN and COMMIT that could
  // not roll back) or broken is not reused.
  if (PQstatus(conn) != CONNECTION_OK || PQtransactionStatus(conn) != PQTRANS_IDLE) {
    PQfinish(conn);
    --open_;
  } else {
    idle_.push_back(conn);
  }
  cv_.notify_one();
}

void PgPool::break_idle_connections_for_test() {
  std::lock_guard lock(mu_);
  for (PGconn* c : idle_) ::shutdown(PQsocket(c), SHUT_RDWR);
}

}  // namespace quarry::store::pgvector
