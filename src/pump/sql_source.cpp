// The `sql` source (SPEC §8): the use case's statements run against the app's PostgreSQL (libpq)
// or SQLite database. Parameters are positional `$1`..`$n` in both; a statement may use any of
// them. A slice is stored in one transaction.
//
// Errors: a lost connection, a timeout, a lock or a serialization failure is retryable
// (Error(engine_unavailable | timeout | busy)); anything else the database says about the
// app's statements (a missing table, a syntax error, a constraint) is the app's to fix:
// Error(contract_violation), which parks the use case before it pays for more embeddings.
#include <libpq-fe.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "pump/source.h"
#include "quarry/error.h"

namespace quarry::pump {
using nlohmann::json;

namespace {

std::string vector_text(const std::vector<float>& v, char open, char close) {
  std::string out(1, open);
  char buf[32];
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    auto r = std::to_chars(buf, buf + sizeof buf, v[i]);
    out.append(buf, r.ptr);
  }
  return out + close;
}

// The highest $n a statement names (0: none). Quoted text is skipped.
int highest_parameter(const std::string& sql) {
  int hi = 0;
  char quote = 0;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    char c = sql[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '$' && i + 1 < sql.size() &&
               std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      int n = 0;
      std::size_t j = i + 1;
      while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j])) && n < 1000)
        n = n * 10 + (sql[j++] - '0');
      hi = std::max(hi, n);
    }
  }
  return hi;
}

// "$3": the name of positional parameter n. Appended rather than "$" + to_string(n): g++ 12 at
// -O3 calls that operator+ (const char*, string&&) an overlapping memcpy (-Wrestrict, a false
// positive: GCC PR 105651).
std::string placeholder(std::size_t n) {
  std::string p(1, '$');
  p += std::to_string(n);
  return p;
}

bool parameter_used(const std::string& sql, int n) {
  const std::string p = placeholder(static_cast<std::size_t>(n));
  for (auto at = sql.find(p); at != std::string::npos; at = sql.find(p, at + 1)) {
    const auto end = at + p.size();
    if (end >= sql.size() || !std::isdigit(static_cast<unsigned char>(sql[end]))) return true;
  }
  return false;
}

// A statement's parameters: text, or an integer where SQLite must see one (LIMIT, indexes).
struct Param {
  std::string text;
  bool integer = false;
};

json row_metadata(const std::string& text, const std::string& id) {
  json m = json::parse(text, nullptr, false);
  if (m.is_discarded() || !m.is_object())
    throw Error(Code::contract_violation,
                "the pending query's metadata for row " + id +
                    " is not a JSON object; return a JSON object text (or NULL)",
                {{"column", "metadata"}});
  return m;
}

[[noreturn]] void missing_column(const char* column) {
  throw Error(Code::contract_violation,
              std::string("the pending query returns no '") + column +
                  "' column; select the row's id AS id and its text AS content (and, optionally, "
                  "a JSON object AS metadata)",
              {{"column", column}});
}

// One slice through the use case's statements, in the order the contract gives: failures,
// then per document its delete, its chunks, its document statement. Only the parameters a
// statement uses are computed (a vector's two text forms cost more than the rest).
template <typename Exec>
void write_slice(const SqlSource& q, const Slice& s, Exec&& exec) {
  const bool bracket = parameter_used(q.store_chunk, 3), braces = parameter_used(q.store_chunk, 7),
             chunk_meta = parameter_used(q.store_chunk, 6);
  for (const auto& f : s.failures)
    if (!q.store_failure.empty())
      exec("store_failure", q.store_failure,
           {{f.id, false},
            {f.code, false},
            {f.message, false},
            {f.skipped ? "1" : "0", true},
            {s.revision, false}});
  for (const auto& d : s.docs) {
    if (!q.delete_document.empty()) exec("delete_document", q.delete_document, {{d.id, false}});
    for (const auto& c : d.chunks)
      exec("store_chunk", q.store_chunk,
           {{d.id, false},
            {std::to_string(c.index), true},
            {bracket ? vector_text(c.vector, '[', ']') : std::string(), false},
            {c.text, false},
            {s.revision, false},
            {chunk_meta ? c.metadata.dump() : std::string(), false},
            {braces ? vector_text(c.vector, '{', '}') : std::string(), false}});
    if (!q.store_document.empty())
      exec("store_document", q.store_document,
           {{d.id, false},
            {s.revision, false},
            {d.metadata.dump(), false},
            {std::to_string(d.chunks.size()), true}});
  }
}

// --- PostgreSQL ----------------------------------------------------------------------------

bool retryable_sqlstate(const std::string& state) {
  const std::string cls = state.substr(0, 2);
  return cls == "08" || cls == "40" || cls == "53" || cls == "57" || cls == "58";
}

class PgSource final : public Source {
 public:
  PgSource(const UseCase& uc, std::string dsn) : uc_(uc), dsn_(std::move(dsn)) {}
  ~PgSource() override {
    if (conn_) PQfinish(conn_);
  }

  std::optional<std::vector<PendingRow>> pending(int limit, const std::string& revision) override {
    PGresult* r =
        run("pending", uc_.sql.pending, {{std::to_string(limit), true}, {revision, false}});
    std::unique_ptr<PGresult, decltype(&PQclear)> guard(r, &PQclear);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) return std::nullopt;
    const int id = PQfnumber(r, "id"), content = PQfnumber(r, "content"),
              meta = PQfnumber(r, "metadata");
    if (PQntuples(r) > 0 || PQnfields(r) > 0) {
      if (id < 0) missing_column("id");
      if (content < 0) missing_column("content");
    }
    std::vector<PendingRow> rows;
    for (int i = 0; i < PQntuples(r); ++i) {
      if (PQgetisnull(r, i, id))
        throw Error(Code::contract_violation, "the pending query returned a row whose id is NULL",
                    {{"column", "id"}});
      PendingRow row;
      row.id = PQgetvalue(r, i, id);
      row.content = PQgetisnull(r, i, content) ? "" : PQgetvalue(r, i, content);
      if (meta >= 0 && !PQgetisnull(r, i, meta))
        row.metadata = row_metadata(PQgetvalue(r, i, meta), row.id);
      rows.push_back(std::move(row));
    }
    return rows;
  }

  void store(const Slice& slice) override {
    connect();
    exec_simple("BEGIN");
    try {
      write_slice(uc_.sql, slice,
                  [&](const char* what, const std::string& sql, const std::vector<Param>& p) {
                    PQclear(run(what, sql, p));
                  });
      exec_simple("COMMIT");
    } catch (...) {
      if (conn_ && PQstatus(conn_) == CONNECTION_OK) PQclear(PQexec(conn_, "ROLLBACK"));
      throw;
    }
  }

  std::string deploy_problem() override {
    if (!uses_vector_type(uc_.sql.pending) && !uses_vector_type(uc_.sql.store_chunk) &&
        !uses_vector_type(uc_.sql.store_document))
      return "";
    connect();
    PGresult* r = PQexec(conn_, "SELECT 1 FROM pg_extension WHERE extname = 'vector'");
    std::unique_ptr<PGresult, decltype(&PQclear)> guard(r, &PQclear);
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0) return "";
    return "pgvector is not installed in the app's database (" + where() +
           "), and the use case's statements use the vector type: CREATE EXTENSION vector "
           "there, then deploy again";
  }

 private:
  std::string where() const {
    if (!conn_) return "PostgreSQL";
    return std::string("database '") + PQdb(conn_) + "' on " + PQhost(conn_) + ":" + PQport(conn_);
  }

  void connect() {
    if (conn_ && PQstatus(conn_) == CONNECTION_OK) return;
    if (conn_) PQfinish(conn_);
    prepared_.clear();
    const std::string timeout = std::to_string(std::max(1, uc_.timeout_ms / 1000));
    const char* keys[] = {"dbname", "connect_timeout", nullptr};
    const char* vals[] = {dsn_.c_str(), timeout.c_str(), nullptr};
    // A refused or dropped connection is retried briefly (a restarting server; PGlite, which
    // serves one connection at a time, notices a closed one a moment later).
    for (int attempt = 0;; ++attempt) {
      conn_ = PQconnectdbParams(keys, vals, /*expand_dbname=*/1);
      if (PQstatus(conn_) == CONNECTION_OK || attempt == 10) break;
      PQfinish(conn_);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (PQstatus(conn_) != CONNECTION_OK)
      throw Error(Code::engine_unavailable,
                  "use case " + uc_.name + ": cannot connect to the app's PostgreSQL: " +
                      PQerrorMessage(conn_) + "; check the DSN in secret '" + uc_.sql.dsn_secret +
                      "' and that the server runs",
                  {{"use_case", uc_.name}});
    // PGlite serves one shared session: start clean. Each statement gets the use case's timeout.
    exec_simple("DISCARD ALL");
    exec_simple("SET statement_timeout = " + std::to_string(uc_.timeout_ms));
  }

  void exec_simple(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    std::unique_ptr<PGresult, decltype(&PQclear)> guard(r, &PQclear);
    check(r, sql.c_str());
  }

  [[noreturn]] void fail(const char* what, PGresult* r) {
    const char* st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    const std::string state = st ? st : "";
    const std::string msg = "use case " + uc_.name + ": the app's database refused the " + what +
                            " statement: " + PQerrorMessage(conn_);
    if (!r || PQstatus(conn_) != CONNECTION_OK)
      throw Error(Code::engine_unavailable, msg, {{"use_case", uc_.name}});
    if (state == "57014") throw Error(Code::timeout, msg, {{"use_case", uc_.name}});
    if (retryable_sqlstate(state))
      throw Error(Code::busy, msg, {{"use_case", uc_.name}, {"sqlstate", state}});
    throw Error(Code::contract_violation, msg + "; fix the statement in the use case file",
                {{"use_case", uc_.name}, {"sqlstate", state}, {"statement", what}});
  }

  void check(PGresult* r, const char* what) {
    auto st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) fail(what, r);
  }

  // Prepared once per connection; unreferenced parameters below the highest are typed text so
  // the server need not infer them.
  PGresult* run(const char* what, const std::string& sql, const std::vector<Param>& params) {
    connect();
    const int n = std::min<int>(highest_parameter(sql), static_cast<int>(params.size()));
    const std::string name = std::string("quarry_") + what;
    if (!prepared_.count(name)) {
      std::vector<Oid> types(static_cast<std::size_t>(n), 0);
      for (int i = 1; i <= n; ++i)
        if (!parameter_used(sql, i)) types[static_cast<std::size_t>(i - 1)] = 25;  // text
      PGresult* p = PQprepare(conn_, name.c_str(), sql.c_str(), n, types.data());
      std::unique_ptr<PGresult, decltype(&PQclear)> guard(p, &PQclear);
      check(p, what);
      prepared_.insert(name);
    }
    std::vector<const char*> values;
    for (int i = 0; i < n; ++i) values.push_back(params[static_cast<std::size_t>(i)].text.c_str());
    PGresult* r = PQexecPrepared(conn_, name.c_str(), n, values.data(), nullptr, nullptr, 0);
    auto st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      std::unique_ptr<PGresult, decltype(&PQclear)> guard(r, &PQclear);
      fail(what, r);
    }
    return r;
  }

  const UseCase& uc_;
  std::string dsn_;
  PGconn* conn_ = nullptr;
  std::set<std::string> prepared_;
};

// --- SQLite --------------------------------------------------------------------------------

class SqliteSource final : public Source {
 public:
  explicit SqliteSource(const UseCase& uc) : uc_(uc) {}
  ~SqliteSource() override {
    for (auto& [k, s] : stmts_) sqlite3_finalize(s);
    if (db_) sqlite3_close(db_);
  }

  std::optional<std::vector<PendingRow>> pending(int limit, const std::string& revision) override {
    sqlite3_stmt* s = prepare("pending", uc_.sql.pending);
    bind(s, {{std::to_string(limit), true}, {revision, false}});
    const int cols = sqlite3_column_count(s);
    if (cols == 0) {  // not a query: no result set at all
      step_all("pending", s);
      return std::nullopt;
    }
    int id = -1, content = -1, meta = -1;
    for (int c = 0; c < cols; ++c) {
      std::string name = sqlite3_column_name(s, c);
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (name == "id") id = c;
      if (name == "content") content = c;
      if (name == "metadata") meta = c;
    }
    if (id < 0) missing_column("id");
    if (content < 0) missing_column("content");
    std::vector<PendingRow> rows;
    while (true) {
      int rc = sqlite3_step(s);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) fail("pending", rc);
      if (sqlite3_column_type(s, id) == SQLITE_NULL)
        throw Error(Code::contract_violation, "the pending query returned a row whose id is NULL",
                    {{"column", "id"}});
      PendingRow row;
      row.id = text(s, id);
      row.content = text(s, content);
      if (meta >= 0 && sqlite3_column_type(s, meta) != SQLITE_NULL)
        row.metadata = row_metadata(text(s, meta), row.id);
      rows.push_back(std::move(row));
    }
    sqlite3_reset(s);
    return rows;
  }

  void store(const Slice& slice) override {
    open();
    exec_simple("BEGIN IMMEDIATE");
    try {
      write_slice(uc_.sql, slice,
                  [&](const char* what, const std::string& sql, const std::vector<Param>& p) {
                    sqlite3_stmt* st = prepare(what, sql);
                    bind(st, p);
                    step_all(what, st);
                  });
      exec_simple("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

 private:
  static std::string text(sqlite3_stmt* s, int c) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, c));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s, c))) : "";
  }

  void open() {
    if (db_) return;
    // The app's file must exist: the pump never creates an app's database.
    int rc = sqlite3_open_v2(uc_.sql.path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr);
    if (rc != SQLITE_OK) {
      std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      if (db_) sqlite3_close(db_);
      db_ = nullptr;
      throw Error(Code::engine_unavailable,
                  "use case " + uc_.name + ": cannot open the app's SQLite database " +
                      uc_.sql.path + ": " + msg,
                  {{"use_case", uc_.name}, {"path", uc_.sql.path}});
    }
    sqlite3_busy_timeout(db_, uc_.timeout_ms);
  }

  [[noreturn]] void fail(const char* what, int rc) {
    const std::string msg = "use case " + uc_.name + ": the app's database refused the " + what +
                            " statement: " + sqlite3_errmsg(db_);
    const int primary = rc & 0xff;
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
      throw Error(Code::busy, msg, {{"use_case", uc_.name}});
    if (primary == SQLITE_IOERR || primary == SQLITE_FULL || primary == SQLITE_CANTOPEN)
      throw Error(Code::io_error, msg, {{"use_case", uc_.name}});
    throw Error(Code::contract_violation, msg + "; fix the statement in the use case file",
                {{"use_case", uc_.name}, {"statement", what}});
  }

  void exec_simple(const char* sql) {
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) fail(sql, rc);
  }

  sqlite3_stmt* prepare(const char* what, const std::string& sql) {
    open();
    auto it = stmts_.find(what);
    if (it != stmts_.end()) {
      sqlite3_reset(it->second);
      sqlite3_clear_bindings(it->second);
      return it->second;
    }
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &s, nullptr);
    if (rc != SQLITE_OK) fail(what, rc);
    if (!s)
      throw Error(Code::contract_violation,
                  "use case " + uc_.name + ": the " + what + " statement is empty",
                  {{"use_case", uc_.name}, {"statement", what}});
    stmts_[what] = s;
    return s;
  }

  void bind(sqlite3_stmt* s, const std::vector<Param>& params) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int at = sqlite3_bind_parameter_index(s, placeholder(i + 1).c_str());
      if (at == 0) continue;
      const auto& p = params[i];
      if (p.integer)
        sqlite3_bind_int64(s, at, std::stoll(p.text));
      else
        sqlite3_bind_text(s, at, p.text.data(), static_cast<int>(p.text.size()), SQLITE_TRANSIENT);
    }
  }

  void step_all(const char* what, sqlite3_stmt* s) {
    while (true) {
      int rc = sqlite3_step(s);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        sqlite3_reset(s);
        fail(what, rc);
      }
    }
    sqlite3_reset(s);
  }

  const UseCase& uc_;
  sqlite3* db_ = nullptr;
  std::map<std::string, sqlite3_stmt*> stmts_;
};

}  // namespace

bool uses_vector_type(const std::string& sql) {
  std::string s = sql;
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto word = [&](std::size_t at) {
    return at < s.size() && (std::isalnum(static_cast<unsigned char>(s[at])) || s[at] == '_');
  };
  auto space = [&](std::size_t at) {
    return at < s.size() && std::isspace(static_cast<unsigned char>(s[at]));
  };
  for (auto at = s.find("vector"); at != std::string::npos; at = s.find("vector", at + 1)) {
    if ((at > 0 && word(at - 1)) || word(at + 6)) continue;  // tsvector, vectors
    std::size_t before = at;
    while (before > 0 && space(before - 1)) --before;
    std::size_t after = at + 6;
    while (space(after)) ++after;
    const bool cast = before >= 2 && s.compare(before - 2, 2, "::") == 0;
    const bool type = after < s.size() && s[after] == '(';  // vector(384), CAST(.. AS vector(..))
    if (cast || type) return true;
  }
  return false;
}

std::unique_ptr<Source> make_sql_source(const UseCase& uc, const SecretLookup& secret) {
  if (uc.sql.driver == "sqlite") return std::make_unique<SqliteSource>(uc);
  std::string dsn = secret ? secret(uc.sql.dsn_secret) : "";
  if (dsn.empty())
    throw Error(Code::invalid_argument,
                "use case " + uc.name + ": secret '" + uc.sql.dsn_secret +
                    "' (source.dsn_secret) is empty or unknown: store the app database's libpq "
                    "DSN in it (quarry secret set " +
                    uc.sql.dsn_secret + ")",
                {{"use_case", uc.name}, {"field", "source.dsn_secret"}});
  return std::make_unique<PgSource>(uc, std::move(dsn));
}

}  // namespace quarry::pump
