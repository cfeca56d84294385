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
    validate_vectors(scope, doc);
    return run(txn, [&](Tx& tx) {
      ScopeInfo info = ensure_scope(tx, scope);
      const std::string t = qualified(s_.schema, info.table);
      std::map<int, std::pair<std::string, std::string>> stored;  // index -> (chunk_id, sha)
      auto r =
          exec(tx.conn,
               "SELECT chunk_index, chunk_id, vec_sha FROM " + t + " WHERE kb = $1 AND doc_id = $2",
               {scope.kb, doc.doc_id});
      for (int i = 0; i < r.rows(); ++i)
        stored[std::stoi(r.value(i, 0))] = {r.value(i, 1), r.value(i, 2)};

      UpsertResult out;
      std::vector<std::string> keep;
      std::vector<const ChunkVector*> changed;
      std::vector<std::string> shas;
      for (const auto& c : doc.chunks) {
        keep.push_back(std::to_string(c.chunk_index));
        std::string sha = vector_sha(c.vector);
        auto it = stored.find(c.chunk_index);
        if (it != stored.end() && it->second.first == c.chunk_id && it->second.second == sha) {
          ++out.skipped;
        } else {
          ++out.written;
          changed.push_back(&c);
          shas.push_back(std::move(sha));
        }
      }
      const std::string meta = metadata_json(doc.metadata);
      exec(tx.conn,
           "DELETE FROM " + t + " WHERE kb = $1 AND doc_id = $2 AND chunk_index <> ALL($3::int[])",
           {scope.kb, doc.doc_id, text_array_literal(keep)});
      insert_batches(tx, t, scope.kb, doc.doc_id, meta, changed, shas);
      if (out.skipped > 0)  // unchanged vectors still take the document's new metadata
        exec(tx.conn,
             "UPDATE " + t +
                 " SET metadata = $3::jsonb WHERE kb = $1 AND doc_id = $2 AND "
                 "metadata IS DISTINCT FROM $3::jsonb",
             {scope.kb, doc.doc_id, meta});
      return out;
    });
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
    return run(nullptr, [&](Tx& tx) -> std::vector<StoreHit> {
      auto info = lookup(tx, scope.kb, scope.revision);
      if (!info) return {};
      if (info->dimensions != scope.dimensions)
        dimension_mismatch("the scope " + scope.kb + "/" + scope.revision, info->dimensions,
                           scope.dimensions);
      exec(tx.conn, query_settings_sql(s_, q.top_k, iterative_));
      SqlParams p;
      p.add(scope.kb);
      p.add(vector_literal(q.vector));
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
                    p.values());
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
    });
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
  template <typename F>
  auto run(Transaction* txn, F&& fn) const -> decltype(fn(std::declval<Tx&>())) {
    check();
    if (auto* pg = dynamic_cast<PgTransaction*>(txn)) {
      if (!pg->open())
        throw Error(Code::invalid_argument,
                    "the pgvector transaction was already committed "
                    "or rolled back; begin a new one");
      Tx tx{pg->connection(), false};
      return fn(tx);
    }
    for (int attempt = 0;; ++attempt) {
      try {
        auto lease = pool_->acquire();
        Tx tx{lease.get(), true};
        exec(tx.conn, "BEGIN");
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

  void validate_vectors(const Scope& scope, const DocumentVectors& doc) const {
    if (scope.dimensions <= 0)
      throw Error(Code::invalid_argument, "a pgvector scope needs its dimensions (> 0)",
                  {{"field", "dimensions"}});
    std::set<int> seen;
    for (const auto& c : doc.chunks) {
      if (c.vector.empty())
        throw Error(Code::mode_unavailable,
                    "the pgvector store does not embed text: give it vectors (embedding mode "
                    "platform)",
                    {{"store", "pgvector"}});
      if (static_cast<int>(c.vector.size()) != scope.dimensions)
        dimension_mismatch("the scope " + scope.kb + "/" + scope.revision, scope.dimensions,
                           static_cast<int>(c.vector.size()));
      if (!seen.insert(c.chunk_index).second)
        throw Error(Code::invalid_argument,
                    "document " + doc.doc_id + " has chunk_index " + std::to_string(c.chunk_index) +
                        " twice",
                    {{"field", "chunk_index"}});
    }
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

  // Multi-row INSERT ... ON CONFLICT in batches of batch_rows (no COPY: PGlite lacks it, and
  // an upsert needs ON CONFLICT anyway). kb, doc_id and metadata are shared parameters.
  void insert_batches(Tx& tx, const std::string& t, const std::string& kb,
                      const std::string& doc_id, const std::string& meta,
                      const std::vector<const ChunkVector*>& rows,
                      const std::vector<std::string>& shas) const {
    const std::size_t batch = static_cast<std::size_t>(s_.batch_rows);
    for (std::size_t start = 0; start < rows.size(); start += batch) {
      SqlParams p;
      p.add(kb);
      p.add(doc_id);
      p.add(meta);
      std::string values;
      for (std::size_t i = start; i < std::min(rows.size(), start + batch); ++i) {
        const auto& c = *rows[i];
        values += std::string(values.empty() ? "" : ", ") + "($1, $2, " +
                  p.add(std::to_string(c.chunk_index)) + "::integer, " + p.add(c.chunk_id) + ", " +
                  p.add(vector_literal(c.vector)) + "::vector, " + p.add(shas[i]) + ", $3::jsonb)";
      }
      exec(tx.conn,
           "INSERT INTO " + t +
               " (kb, doc_id, chunk_index, chunk_id, embedding, vec_sha, metadata) VALUES " +
               values +
               " ON CONFLICT (kb, doc_id, chunk_index) DO UPDATE SET chunk_id = "
               "EXCLUDED.chunk_id, embedding = EXCLUDED.embedding, vec_sha = EXCLUDED.vec_sha, "
               "metadata = EXCLUDED.metadata",
           p.values());
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
