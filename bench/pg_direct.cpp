// See pg_direct.h.
#include "pg_direct.h"

#include <libpq-fe.h>

#include <cstring>
#include <stdexcept>

namespace quarry::bench {
namespace {

using namespace quarry::store;

std::string binary_vector(const std::vector<float>& v) {  // pgvector's vector_recv layout
  std::string out(4 + 4 * v.size(), '\0');
  out[0] = static_cast<char>(v.size() >> 8);
  out[1] = static_cast<char>(v.size() & 0xff);
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint32_t u;
    std::memcpy(&u, &v[i], 4);
    for (int b = 0; b < 4; ++b) out[4 + 4 * i + b] = static_cast<char>(u >> (24 - 8 * b));
  }
  return out;
}

class PgDirect final : public VectorStore {
 public:
  PgDirect(const std::string& dsn, std::string mode, int dims) : mode_(std::move(mode)) {
    c_ = PQconnectdb(dsn.c_str());
    if (PQstatus(c_) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(c_));
    ok("DISCARD ALL");
    ok("SET client_min_messages = warning");
    ok("CREATE EXTENSION IF NOT EXISTS vector");
    ok("DROP SCHEMA IF EXISTS bench_direct CASCADE");
    ok("CREATE SCHEMA bench_direct");
    ok("CREATE TABLE bench_direct.v (kb text NOT NULL, doc_id text NOT NULL, chunk_index integer "
       "NOT NULL, chunk_id text NOT NULL, embedding vector(" +
       std::to_string(dims) +
       ") NOT NULL, vec_sha text NOT NULL, metadata jsonb NOT NULL DEFAULT '{}', PRIMARY KEY "
       "(kb, doc_id, chunk_index))");
    ok("CREATE INDEX ON bench_direct.v USING hnsw (embedding vector_cosine_ops) WITH (m = 16, "
       "ef_construction = 200)");
    if (mode_ == "plain") {
      ok("SET hnsw.ef_search = 64");
      prepare("knn", "SELECT doc_id FROM bench_direct.v ORDER BY embedding <=> $1::vector LIMIT 10",
              1);
    }
  }
  ~PgDirect() override {
    PQclear(PQexec(c_, "DROP SCHEMA IF EXISTS bench_direct CASCADE"));
    PQclear(PQexec(c_, "RESET ALL"));
    PQfinish(c_);
  }

  std::string id() const override { return "pgvector-direct"; }
  Capabilities capabilities() const override { return {}; }

  UpsertResult upsert(const Scope& scope, const DocumentVectors& doc, Transaction*) override {
    return upsert_many(scope, std::vector<DocumentVectors>{doc}, nullptr).front();
  }

  std::vector<UpsertResult> upsert_many(const Scope& scope,
                                        const std::vector<DocumentVectors>& docs,
                                        Transaction*) override {
    std::vector<std::string> vals;
    std::string sql =
        "INSERT INTO bench_direct.v (kb, doc_id, chunk_index, chunk_id, embedding, vec_sha) "
        "VALUES ";
    std::vector<int> fmts;
    int rows = 0;
    for (const auto& d : docs)
      for (const auto& c : d.chunks) {
        const int b = static_cast<int>(vals.size());
        sql += (rows++ ? ", (" : "(") + ph(b + 1) + ", " + ph(b + 2) + ", " + ph(b + 3) +
               "::integer, " + ph(b + 4) + ", " + ph(b + 5) + "::vector, '')";
        for (auto v : {scope.kb, d.doc_id, std::to_string(c.chunk_index), c.chunk_id,
                       binary_vector(c.vector)})
          vals.push_back(std::move(v));
        fmts.insert(fmts.end(), {0, 0, 0, 0, 1});
      }
    exec(sql, vals, fmts);
    return std::vector<UpsertResult>(docs.size(), UpsertResult{1, 0});
  }

  std::vector<StoreHit> query(const Scope& scope, const Query& q) const override {
    std::vector<StoreHit> hits;
    PGresult* r = nullptr;
    const std::string vec = binary_vector(q.vector), k = std::to_string(q.top_k);
    if (mode_ == "plain" && q.top_k != 10) {  // the first query of build() asks for 1
      r = exec_raw("SELECT doc_id FROM bench_direct.v ORDER BY embedding <=> $1::vector LIMIT " + k,
                   {vec}, {1});
    } else if (mode_ == "plain") {
      const char* v[1] = {vec.data()};
      int len[1] = {static_cast<int>(vec.size())}, fmt[1] = {1};
      r = PQexecPrepared(c_, "knn", 1, v, len, fmt, 0);
    } else {
      ok("BEGIN;SET LOCAL hnsw.ef_search = 64;SET LOCAL hnsw.iterative_scan = relaxed_order;");
      r = exec_raw(
          "WITH hits AS MATERIALIZED (SELECT doc_id, chunk_index, chunk_id, embedding <=> "
          "$2::vector AS distance FROM bench_direct.v WHERE kb = $1 AND TRUE ORDER BY embedding "
          "<=> $2::vector LIMIT $3::integer) SELECT doc_id, chunk_index, chunk_id, distance FROM "
          "hits ORDER BY distance, doc_id, chunk_index",
          {scope.kb, vec, k}, {0, 1, 0});
    }
    check(r, "query");
    for (int i = 0; i < PQntuples(r); ++i) {
      StoreHit h;
      h.doc_id = PQgetvalue(r, i, 0);
      hits.push_back(std::move(h));
    }
    PQclear(r);
    if (mode_ != "plain") ok("COMMIT");
    return hits;
  }

  int delete_document(const std::string&, const std::string&, Transaction*) override { return 0; }
  int delete_kb(const std::string&, Transaction*) override { return 0; }
  int delete_where(const std::string&, const core::Filter&, Transaction*) override { return 0; }
  int delete_other_revisions(const std::string&, const std::string&) override { return 0; }
  bool has(const Scope&, const std::string&) const override { return false; }
  std::int64_t count(const Scope&) const override { return 0; }

 private:
  static std::string ph(int i) { return "$" + std::to_string(i); }
  void check(PGresult* r, const std::string& what) const {
    auto s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
      std::string m = what + ": " + PQerrorMessage(c_);
      PQclear(r);
      throw std::runtime_error(m);
    }
  }
  void ok(const std::string& sql) const {
    PGresult* r = PQexec(c_, sql.c_str());
    check(r, sql);
    PQclear(r);
  }
  void prepare(const char* name, const char* sql, int n) {
    PGresult* r = PQprepare(c_, name, sql, n, nullptr);
    check(r, "prepare");
    PQclear(r);
  }
  PGresult* exec_raw(const std::string& sql, const std::vector<std::string>& vals,
                     const std::vector<int>& fmts) const {
    std::vector<const char*> v;
    std::vector<int> len;
    for (const auto& s : vals) {
      v.push_back(s.data());
      len.push_back(static_cast<int>(s.size()));
    }
    return PQexecParams(c_, sql.c_str(), static_cast<int>(v.size()), nullptr, v.data(), len.data(),
                        fmts.data(), 0);
  }
  void exec(const std::string& sql, const std::vector<std::string>& vals,
            const std::vector<int>& fmts) const {
    PGresult* r = exec_raw(sql, vals, fmts);
    check(r, "insert");
    PQclear(r);
  }

  PGconn* c_;
  std::string mode_;
};

}  // namespace

std::unique_ptr<store::VectorStore> make_pg_direct(const std::string& dsn, const std::string& mode,
                                                   int dimensions) {
  if (mode != "plain" && mode != "same_sql")
    throw std::runtime_error("pg-direct mode is plain or same_sql");
  return std::make_unique<PgDirect>(dsn, mode, dimensions);
}

}  // namespace quarry::bench
