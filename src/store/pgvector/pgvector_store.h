// The `pgvector` vector store (SPEC §6): vectors in PostgreSQL with the pgvector extension,
// spoken to through libpq. Settings and trade-offs: docs/stores.md ("pgvector").
//
// Layout, all inside the store's own schema (settings.schema, default "quarry"):
// - quarry_scopes(kb, revision, table_name, dimensions): which table holds a scope. It is how a
//   KB's tables are found for kb-wide deletes, and how a caller with other dimensions is refused
//   before the server sees a vector.
// - vectors tables (kb, doc_id, chunk_index, chunk_id, embedding vector(N), vec_sha, metadata
//   jsonb), keyed by (kb, doc_id, chunk_index): one per revision shared by KBs (tenancy
//   row_filter; every statement filters on kb) or one per (KB, revision) (tenancy collection).
//   Each has an HNSW or IVFFlat index over cosine distance.
//
// Nothing touches the server until the first call (or is_available()): then the store checks
// the `vector` extension (creating it when the server offers it and create_extension is on) and
// refuses, naming the database, when it is missing; only after that does it run any DDL. A
// store that is never selected never connects, so it runs no DDL.
//
// Transactions: every call runs in a transaction of its own, unless the caller passes a
// PgTransaction (begin_transaction()), whose connection and transaction the call then joins;
// other stores' Transaction types are ignored. Queries always run in their own transaction,
// because SET LOCAL (ef_search, iterative scan) must not leak into a caller's.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "store/pgvector/pg_pool.h"
#include "store/pgvector/pg_sql.h"
#include "store/vector_store.h"

namespace quarry::store::pgvector {

// A transaction on one pooled connection of a pgvector store, for the port's Transaction*.
// Destroying it without commit() rolls back. While it lives it holds one connection: with
// pool_size 1, calls made without it block until it ends.
class PgTransaction : public Transaction {
 public:
  explicit PgTransaction(PgPool::Lease lease);
  ~PgTransaction() override;
  void commit();
  void rollback();
  PGconn* connection() const { return lease_.get(); }
  bool open() const { return open_; }

 private:
  PgPool::Lease lease_;
  bool open_ = true;
};

class PgvectorStore : public VectorStore {
 public:
  virtual std::unique_ptr<PgTransaction> begin_transaction() = 0;
  // Connects and checks the extension (and creates the schema); throws the named error.
  virtual void check() const = 0;
  // The installed pgvector version ("0.8.1"); empty before the first successful check().
  virtual std::string extension_version() const = 0;
  virtual PgPool& pool_for_test() = 0;
};

// Throws Error(invalid_argument) for bad settings or an empty DSN secret. Connects lazily.
std::unique_ptr<PgvectorStore> make_pgvector_store(const nlohmann::json& settings,
                                                   const StoreContext& ctx);

}  // namespace quarry::store::pgvector
