// The pgvector store: the port's calls as SQL over pooled libpq connections. Layout, tenancy
// and transaction rules: pgvector_store.h; SQL text and filter translation: pg_sql.cpp.
#include "store/pgvector/pgvector_store.h"

#include <map>
#include <optional>
#include <set>

#include "core/util.h"
#include "quarry/error.h"

namespace quarry::store::pgvector {
namespace {

struct ScopeInfo {
  std::string table;
  int dimensions = 0;
};

// A connection inside a transaction, and whether that transaction is ours (then what it learns
// may be cached: it commits before anyone else relies on it).
struct Tx {
  PGconn* conn;
  bool own;
};

[[noreturn]] void dimension_mismatch(const std::string& what, int have, int got) {
  throw Error(Code::dimension_mismatch,
              what + " holds " + std::to_string(have) + "-dimensional vectors; got " +
                  std::to_string(got) +
                  " dimensions: embed with the revision's model, or start a new revision",
              {{"expected", std::to_string(have)}, {"actual", std::to_string(got)}});
}

std::string vector_sha(const std::vector<float>& v) {
  return core::sha256_hex(
      std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}

class Store final : public PgvectorStore {
 public:
  Store(PgSettings s, std::string dsn)
      : s_(std::move(s)),
        pool_(std::make_unique<PgPool>(
            std::move(dsn),
            PgPool::Options{s_.pool_size, s_.acquire_timeout_ms, s_.reset_on_connect})),
        scopes_(qualified(s_.schema, "quarry_scopes")) {}

  std::string id() const override { return "pgvector"; }

  Capabilities capabilities() const override {
    Capabilities c;
    c.metadata_filter = true;
    c.hybrid = false;
    c.namespaces = false;
    c.hard_delete = true;
    c.native_dimensions = false;
    c.embeds_on_write = false;
    c.tenancy = s_.tenancy;
    return c;
  }

  UpsertResult upsert(const Scope& scope, const DocumentVectors& doc, Transaction* txn) override {
    return write(scope, {&doc}, txn).front();
  }

  std::vector<UpsertResult> upsert_many(const Scope& scope,
                                        const std::vector<DocumentVectors>& docs,
                                        Transaction* txn) override {
    return write(scope, pointers_to(docs), txn);
  }

  std::vector<StoreHit> query(const Scope& scope, const Query& q) const override {
    check();
    if (q.top_k <= 0) return {};
    if (q.vector.empty())
      throw Error(Code::mode_unavailable,
                  "the pgvector store does not embed text: query it with a vector (embedding "
                  "mode platform)",
                  {{"store", "pgvector"}});
    if (static_cast<int>(q.vector.size()) != scope.dimensions)
      dimension_mismatch("the scope " + scope.kb + "/" + scope.revision, scope.dimensions,
                         static_cast<int>(q.vector.size()));
    // SET LOCAL travels with BEGIN: one round trip fewer per query.
    const std::string settings = query_settings_sql(s_, q.top_k, iterative_);
    return run(
        nullptr,
        [&](Tx& tx) -> std::vector<StoreHit> {
          auto info = lookup(tx, scope.kb, scope.revision);
          if (!info) return {};
          if (info->dimensions != scope.dimensions)
            dimension_mismatch("the scope " + scope.kb + "/" + scope.revision, info->dimensions,
                               scope.dimensions);
          SqlParams p;
          p.add(scope.kb);
          p.add_binary(vector_binary(q.vector));
          std::string where = filter_sql(q.filter, p);
          std::string limit = p.add(std::to_string(q.top_k));
          // The inner query is what the index serves (ORDER BY distance LIMIT k); an iterative
          // relaxed_order scan may return it slightly out of order, so the outer one re-sorts.
          auto r = exec(tx.conn,
                        "WITH hits AS MATERIALIZED (SELECT doc_id, chunk_index, chunk_id, "
                        "embedding <=> $2::vector AS distance FROM " +
                            qualified(s_.schema, info->table) + " WHERE kb = $1 AND " + where +
                            " ORDER BY embedding <=> $2::vector LIMIT " + limit +
                            "::integer) SELECT doc_id, chunk_index, chunk_id, distance FROM hits "
                            "ORDER BY distance, doc_id, chunk_index",
                        p.values(), p.formats());
          std::vector<StoreHit> hits;
          hits.reserve(static_cast<std::size_t>(r.rows()));
          for (int i = 0; i < r.rows(); ++i) {
            StoreHit h;
            h.doc_id = r.value(i, 0);
            h.chunk_index = std::stoi(r.value(i, 1));
            h.chunk_id = r.value(i, 2);
            h.raw_score = std::stod(r.value(i, 3));
            h.score = cosine_score(h.raw_score);
            hits.push_back(std::move(h));
          }
          return hits;
        },
        settings);
  }

  int delete_document(const std::string& kb, const std::string& doc_id, Transaction* txn) override {
    return run(txn, [&](Tx& tx) {
      long n = 0;
      for (const auto& [rev, table] : scopes_of(tx, kb))
        n += exec(tx.conn,
                  "DELETE FROM " + qualified(s_.schema, table) + " WHERE kb = $1 AND doc_id = $2",
                  {kb, doc_id})
                 .affected();
      return static_cast<int>(n);
    });
  }

  int delete_where(const std::string& kb, const core::Filter& filter, Transaction* txn) override {
    if (filter.empty())
      throw Error(Code::invalid_argument,
                  "delete_where needs a non-empty filter (use delete_kb to delete everything)",
                  {{"field", "filter"}});
    return run(txn, [&](Tx& tx) {
      long n = 0;
      for (const auto& [rev, table] : scopes_of(tx, kb)) {
        SqlParams p;
        p.add(kb);
        std::string where = filter_sql(filter, p);
        n += exec(tx.conn,
                  "DELETE FROM " + qualified(s_.schema, table) + " WHERE kb = $1 AND " + where,
                  p.values())
                 .affected();
      }
      return static_cast<int>(n);
    });
  }

  int delete_kb(const std::string& kb, Transaction* txn) override {
    return run(txn, [&](Tx& tx) { return drop_scopes(tx, kb, std::nullopt); });
  }

  int delete_other_revisions(const std::string& kb, const std::string& keep) override {
    return run(nullptr, [&](Tx& tx) { return drop_scopes(tx, kb, keep); });
  }

  bool has(const Scope& scope, const std::string& doc_id) const override {
    return run(nullptr, [&](Tx& tx) {
      auto info = lookup(tx, scope.kb, scope.revision);
      if (!info) return false;
      return exec(tx.conn,
                  "SELECT EXISTS (SELECT 1 FROM " + qualified(s_.schema, info->table) +
                      " WHERE kb = $1 AND doc_id = $2)",
                  {scope.kb, doc_id})
                 .value(0, 0) == "t";
    });
  }

  std::int64_t count(const Scope& scope) const override {
    return run(nullptr, [&](Tx& tx) -> std::int64_t {
      auto info = lookup(tx, scope.kb, scope.revision);
      if (!info) return 0;
      return std::stoll(
          exec(tx.conn,
               "SELECT count(*) FROM " + qualified(s_.schema, info->table) + " WHERE kb = $1",
               {scope.kb})
              .value(0, 0));
    });
  }

  bool is_available() const override {
    try {
      check();
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

  std::unique_ptr<PgTransaction> begin_transaction() override {
    check();
    return std::make_unique<PgTransaction>(pool_->acquire());
  }

  void check() const override {
    std::lock_guard g(init_mu_);
    if (ready_) return;
    for (int attempt = 0;; ++attempt) {
      try {
        auto lease = pool_->acquire();
        prepare(lease.get());
        ready_ = true;
        return;
      } catch (const Error& e) {
        if (attempt == 0 && e.details().count(kConnectionLost)) continue;
        throw;
      }
    }
  }

  std::string extension_version() const override {
    std::lock_guard g(init_mu_);
    return version_;
  }

  PgPool& pool_for_test() override { return *pool_; }

 private:
  // Runs fn in the caller's PgTransaction, or in one of our own (BEGIN ... COMMIT) that is
  // retried once when the connection was lost or a cached table vanished (dropped elsewhere).
  // `begin_with`: statements (SET LOCAL ...) run first in the transaction; sent with BEGIN
  // when the transaction is ours.
  template <typename F>
  auto run(Transaction* txn, F&& fn, const std::string& begin_with = {}) const
      -> decltype(fn(std::declval<Tx&>())) {
    check();
    if (auto* pg = dynamic_cast<PgTransaction*>(txn)) {
      if (!pg->open())
        throw Error(Code::invalid_argument,
                    "the pgvector transaction was already committed "
                    "or rolled back; begin a new one");
      Tx tx{pg->connection(), false};
      if (!begin_with.empty()) exec(tx.conn, begin_with);
      return fn(tx);
    }
    for (int attempt = 0;; ++attempt) {
      try {
        auto lease = pool_->acquire();
        Tx tx{lease.get(), true};
        exec(tx.conn, begin_with.empty() ? "BEGIN" : "BEGIN;" + begin_with);
        try {
          auto result = fn(tx);
          exec(tx.conn, "COMMIT");
          return result;
        } catch (...) {
          if (PQstatus(tx.conn) == CONNECTION_OK) PQclear(PQexec(tx.conn, "ROLLBACK"));
          throw;
        }
      } catch (const Error& e) {
        bool lost = e.details().count(kConnectionLost) > 0;
        auto st = e.details().find("sqlstate");
        bool vanished = st != e.details().end() && st->second == "42P01";
        if (attempt > 0 || !(lost || vanished)) throw;
        if (vanished) forget_all();
      }
    }
  }

  // First contact: the extension (named error when missing), then the schema. Nothing else.
  void prepare(PGconn* c) const {
    auto r = exec(c,
                  "SELECT current_database(), "
                  "(SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
                  "(SELECT default_version FROM pg_available_extensions WHERE name = 'vector')");
    const std::string db = r.value(0, 0);
    std::string version = r.is_null(0, 1) ? "" : r.value(0, 1);
    const bool offered = !r.is_null(0, 2);
    const std::map<std::string, std::string> details = {
        {"database", db}, {"extension", "vector"}, {"store", "pgvector"}};
    if (version.empty()) {
      if (!offered)
        throw Error(Code::engine_unavailable,
                    "PostgreSQL database '" + db + "' (" + describe(c) +
                        ") lacks the 'vector' extension (pgvector) and the server does not "
                        "offer it: install pgvector on the server, run CREATE EXTENSION vector; "
                        "in database '" +
                        db + "', or choose another vector store",
                    details);
      if (!s_.create_extension)
        throw Error(Code::engine_unavailable,
                    "PostgreSQL database '" + db + "' (" + describe(c) +
                        ") lacks the 'vector' extension: run CREATE EXTENSION vector; in it "
                        "(or set the store's create_extension to true)",
                    details);
      try {
        exec(c, "CREATE EXTENSION IF NOT EXISTS vector");
      } catch (const Error& e) {
        if (e.details().count(kConnectionLost)) throw;
        throw Error(Code::engine_unavailable,
                    "PostgreSQL database '" + db +
                        "' lacks the 'vector' extension and this "
                        "role could not create it (" +
                        e.message() +
                        "): have a superuser run CREATE EXTENSION vector; in database '" + db + "'",
                    details);
      }
      version = exec(c, "SELECT extversion FROM pg_extension WHERE extname = 'vector'").value(0, 0);
    }
    exec(c, "BEGIN");
    try {
      lock_ddl(c);
      exec(c, "CREATE SCHEMA IF NOT EXISTS " + quote_ident(s_.schema));
      exec(c, scopes_table_ddl(s_.schema));
      exec(c, "COMMIT");
    } catch (...) {
      if (PQstatus(c) == CONNECTION_OK) PQclear(PQexec(c, "ROLLBACK"));
      throw;
    }
    version_ = version;
    iterative_ = version_at_least(version, 0, 8);
  }

  // Serialises this schema's DDL across processes until the transaction ends.
  void lock_ddl(PGconn* c) const {
    exec(c, "SELECT pg_advisory_xact_lock(hashtext($1))", {"quarry-pgvector:" + s_.schema});
  }

  // Documents of one scope in one transaction (the caller's, when given): one read of what is
  // stored, one delete of the chunks the documents no longer have, multi-row inserts of what
  // changed, one metadata update for unchanged chunks. Every document is checked first.
  std::vector<UpsertResult> write(const Scope& scope,
                                  const std::vector<const DocumentVectors*>& docs,
                                  Transaction* txn) {
    if (scope.dimensions <= 0)
      throw Error(Code::invalid_argument, "a pgvector scope needs its dimensions (> 0)",
                  {{"field", "dimensions"}});
    check_upsert_batch("pgvector", scope, docs, false);
    if (docs.empty()) return {};
    return run(txn, [&](Tx& tx) {
      ScopeInfo info = ensure_scope(tx, scope);
      const std::string t = qualified(s_.schema, info.table);
      std::vector<std::string> ids, metas;
      std::map<std::string, std::size_t> pos;
      for (std::size_t d = 0; d < docs.size(); ++d) {
        ids.push_back(docs[d]->doc_id);
        metas.push_back(metadata_json(metadata_of(*docs[d])));
        pos[docs[d]->doc_id] = d;
      }
      const std::string id_array = text_array_literal(ids);
      // (doc, index) -> (chunk_id, sha)
      std::map<std::pair<std::size_t, int>, std::pair<std::string, std::string>> stored;
      auto r = exec(tx.conn,
                    "SELECT doc_id, chunk_index, chunk_id, vec_sha FROM " + t +
                        " WHERE kb = $1 AND doc_id = ANY($2::text[])",
                    {scope.kb, id_array});
      for (int i = 0; i < r.rows(); ++i)
        stored[{pos.at(r.value(i, 0)), std::stoi(r.value(i, 1))}] = {r.value(i, 2), r.value(i, 3)};

      std::vector<UpsertResult> out(docs.size());
      std::vector<std::string> keep_docs, keep_indexes, touched_ids, touched_metas;
      std::vector<Row> rows;
      for (std::size_t d = 0; d < docs.size(); ++d) {
        for (const auto& c : docs[d]->chunks) {
          keep_docs.push_back(docs[d]->doc_id);
          keep_indexes.push_back(std::to_string(c.chunk_index));
          std::string sha = vector_sha(c.vector);
          auto it = stored.find({d, c.chunk_index});
          if (it != stored.end() && it->second.first == c.chunk_id && it->second.second == sha) {
            ++out[d].skipped;
          } else {
            ++out[d].written;
            rows.push_back({d, &c, std::move(sha)});
          }
        }
        if (out[d].skipped > 0) {  // unchanged vectors still take the document's new metadata
          touched_ids.push_back(docs[d]->doc_id);
          touched_metas.push_back(metas[d]);
        }
      }
      exec(tx.conn,
           "DELETE FROM " + t +
               " AS v WHERE kb = $1 AND doc_id = ANY($2::text[]) AND NOT EXISTS (SELECT 1 FROM "
               "unnest($3::text[], $4::int[]) AS k(doc_id, chunk_index) WHERE k.doc_id = "
               "v.doc_id AND k.chunk_index = v.chunk_index)",
           {scope.kb, id_array, text_array_literal(keep_docs), text_array_literal(keep_indexes)});
      insert_batches(tx, t, scope.kb, docs, metas, rows);
      if (!touched_ids.empty())
        exec(tx.conn,
             "UPDATE " + t +
                 " AS v SET metadata = m.metadata::jsonb FROM unnest($2::text[], $3::text[]) AS "
                 "m(doc_id, metadata) WHERE v.kb = $1 AND v.doc_id = m.doc_id AND v.metadata IS "
                 "DISTINCT FROM m.metadata::jsonb",
             {scope.kb, text_array_literal(touched_ids), text_array_literal(touched_metas)});
      return out;
    });
  }

  std::optional<ScopeInfo> lookup(Tx& tx, const std::string& kb, const std::string& rev,
                                  bool use_cache = true) const {
    auto key = std::make_pair(kb, rev);
    if (use_cache) {
      std::lock_guard g(cache_mu_);
      auto it = cache_.find(key);
      if (it != cache_.end()) return it->second;
    }
    auto r =
        exec(tx.conn,
             "SELECT table_name, dimensions FROM " + scopes_ + " WHERE kb = $1 AND revision = $2",
             {kb, rev});
    if (r.rows() == 0) return std::nullopt;
    ScopeInfo info{r.value(0, 0), std::stoi(r.value(0, 1))};
    if (tx.own) {
      std::lock_guard g(cache_mu_);
      cache_[key] = info;
    }
    return info;
  }

  ScopeInfo ensure_scope(Tx& tx, const Scope& scope) const {
    const std::string what = "the scope " + scope.kb + "/" + scope.revision;
    if (auto info = lookup(tx, scope.kb, scope.revision)) {
      if (info->dimensions != scope.dimensions)
        dimension_mismatch(what, info->dimensions, scope.dimensions);
      return *info;
    }
    lock_ddl(tx.conn);
    if (auto info = lookup(tx, scope.kb, scope.revision, false)) {  // made meanwhile
      if (info->dimensions != scope.dimensions)
        dimension_mismatch(what, info->dimensions, scope.dimensions);
      return *info;
    }
    ScopeInfo info{table_name(s_, scope.kb, scope.revision), scope.dimensions};
    auto shared =
        exec(tx.conn, "SELECT dimensions FROM " + scopes_ + " WHERE table_name = $1 LIMIT 1",
             {info.table});
    if (shared.rows() > 0 && std::stoi(shared.value(0, 0)) != scope.dimensions)
      dimension_mismatch("revision " + scope.revision, std::stoi(shared.value(0, 0)),
                         scope.dimensions);
    for (const auto& ddl : vectors_table_ddl(s_, info.table, scope.dimensions)) exec(tx.conn, ddl);
    exec(tx.conn,
         "INSERT INTO " + scopes_ +
             " (kb, revision, table_name, dimensions) VALUES ($1, $2, $3, $4::integer) "
             "ON CONFLICT DO NOTHING",
         {scope.kb, scope.revision, info.table, std::to_string(scope.dimensions)});
    return info;
  }

  struct Row {
    std::size_t doc;  // index into the call's documents
    const ChunkVector* chunk;
    std::string sha;
  };

  // Multi-row INSERT ... ON CONFLICT in batches of batch_rows (no COPY: PGlite lacks it, and
  // an upsert needs ON CONFLICT anyway). A document's id and metadata are one parameter each
  // per statement, however many of its chunks the statement carries.
  void insert_batches(Tx& tx, const std::string& t, const std::string& kb,
                      const std::vector<const DocumentVectors*>& docs,
                      const std::vector<std::string>& metas, const std::vector<Row>& rows) const {
    const std::size_t batch = static_cast<std::size_t>(s_.batch_rows);
    for (std::size_t start = 0; start < rows.size(); start += batch) {
      SqlParams p;
      p.add(kb);
      std::map<std::size_t, std::pair<std::string, std::string>> doc_params;  // id, metadata
      std::string values;
      for (std::size_t i = start; i < std::min(rows.size(), start + batch); ++i) {
        const Row& row = rows[i];
        auto it = doc_params.find(row.doc);
        if (it == doc_params.end())
          it = doc_params
                   .emplace(row.doc,
                            std::make_pair(p.add(docs[row.doc]->doc_id), p.add(metas[row.doc])))
                   .first;
        const auto& c = *row.chunk;
        values += std::string(values.empty() ? "" : ", ") + "($1, " + it->second.first + ", " +
                  p.add(std::to_string(c.chunk_index)) + "::integer, " + p.add(c.chunk_id) + ", " +
                  p.add_binary(vector_binary(c.vector)) + "::vector, " + p.add(row.sha) + ", " +
                  it->second.second + "::jsonb)";
      }
      exec(tx.conn,
           "INSERT INTO " + t +
               " (kb, doc_id, chunk_index, chunk_id, embedding, vec_sha, metadata) VALUES " +
               values +
               " ON CONFLICT (kb, doc_id, chunk_index) DO UPDATE SET chunk_id = "
               "EXCLUDED.chunk_id, embedding = EXCLUDED.embedding, vec_sha = EXCLUDED.vec_sha, "
               "metadata = EXCLUDED.metadata",
           p.values(), p.formats());
    }
  }

  std::vector<std::pair<std::string, std::string>> scopes_of(Tx& tx, const std::string& kb) const {
    auto r = exec(tx.conn, "SELECT revision, table_name FROM " + scopes_ + " WHERE kb = $1", {kb});
    std::vector<std::pair<std::string, std::string>> out;
    for (int i = 0; i < r.rows(); ++i) out.emplace_back(r.value(i, 0), r.value(i, 1));
    return out;
  }

  // Deletes the KB's scopes (all, or all but `keep`): their rows, their registry entries, and
  // the tables nobody uses any more.
  int drop_scopes(Tx& tx, const std::string& kb, const std::optional<std::string>& keep) const {
    lock_ddl(tx.conn);
    long n = 0;
    for (const auto& [rev, table] : scopes_of(tx, kb)) {
      if (keep && rev == *keep) continue;
      const std::string t = qualified(s_.schema, table);
      n += exec(tx.conn, "DELETE FROM " + t + " WHERE kb = $1", {kb}).affected();
      exec(tx.conn, "DELETE FROM " + scopes_ + " WHERE kb = $1 AND revision = $2", {kb, rev});
      if (exec(tx.conn, "SELECT 1 FROM " + scopes_ + " WHERE table_name = $1 LIMIT 1", {table})
              .rows() == 0)
        exec(tx.conn, "DROP TABLE IF EXISTS " + t);
      std::lock_guard g(cache_mu_);
      cache_.erase({kb, rev});
    }
    return static_cast<int>(n);
  }

  void forget_all() const {
    std::lock_guard g(cache_mu_);
    cache_.clear();
  }

  PgSettings s_;
  std::unique_ptr<PgPool> pool_;
  std::string scopes_;
  mutable std::mutex init_mu_;
  mutable bool ready_ = false;
  mutable std::string version_;
  mutable bool iterative_ = false;
  mutable std::mutex cache_mu_;
  mutable std::map<std::pair<std::string, std::string>, ScopeInfo> cache_;
};

}  // namespace

std::unique_ptr<PgvectorStore> make_pgvector_store(const nlohmann::json& settings,
                                                   const StoreContext& ctx) {
  PgSettings s = parse_pg_settings(settings);
  if (!ctx.secret)
    throw Error(Code::invalid_argument, "the pgvector store needs the secret store for its DSN",
                {{"key", "dsn_secret"}});
  std::string dsn = ctx.secret(s.dsn_secret);
  if (dsn.empty())
    throw Error(Code::invalid_argument,
                "secret '" + s.dsn_secret +
                    "' (the pgvector store's dsn_secret) is empty: store the libpq DSN in it",
                {{"key", "dsn_secret"}});
  return std::make_unique<Store>(std::move(s), std::move(dsn));
}

}  // namespace quarry::store::pgvector
