// The durable half of the embedded store: <data_dir>/vectors/vectors.db (SQLite, WAL). Every
// vector lives here; the in-memory and on-disk indexes are derived from it and can be rebuilt.
//
//   scopes(kb, revision, dims, epoch, seq, tomb_floor)
//       epoch: incarnation id, new each time the scope is (re)created, so a reader notices a
//              delete_kb + re-ingest even if the sequence numbers happen to line up.
//       seq:   bumped by every committed change to the scope (one writer at a time).
//       tomb_floor: tombstones with seq <= tomb_floor were purged.
//   docs(kb, revision, doc_id, metadata json, seq)        metadata for filters; seq of last change
//   vectors(id AUTOINCREMENT, kb, revision, doc_id, chunk_index, chunk_id, vector f32 BLOB)
//       id is never reused (AUTOINCREMENT): it is the index key, so a replaced chunk gets a new
//       key and an old index can never confuse it with its predecessor.
//   tombstones(kb, revision, seq, vec_id)   ids removed (deleted or replaced) by change `seq`
//
// All methods are thread-safe (one connection behind a mutex). Other processes may write the
// same file; SQLite's busy timeout waits for them.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "store/vector_store.h"

namespace quarry::store::embedded {

struct ScopeRow {
  int dims = 0;
  std::int64_t epoch = 0;
  std::int64_t seq = 0;
  std::int64_t tomb_floor = 0;
};

struct RowMeta {
  std::string doc_id;
  int chunk_index = 0;
  std::string chunk_id;
};

class VectorDb {
 public:
  explicit VectorDb(const std::string& path);
  ~VectorDb();
  VectorDb(const VectorDb&) = delete;
  VectorDb& operator=(const VectorDb&) = delete;

  UpsertResult upsert(const Scope& scope, const DocumentVectors& doc);
  // n documents in one write transaction (all checked before it begins).
  std::vector<UpsertResult> upsert_many(const Scope& scope, const DocumentVectors* docs,
                                        std::size_t n);
  int delete_document(const std::string& kb, const std::string& doc_id);
  int delete_where(const std::string& kb, const core::Filter& filter);
  // revision empty: every revision; else every revision except `keep_revision`.
  int delete_revisions(const std::string& kb, const std::string* keep_revision);
  // Drops tombstones of a scope up to `seq` (an index at `seq` or later is on disk).
  void purge_tombstones(const std::string& kb, const std::string& revision, std::int64_t seq);
  bool has(const Scope& scope, const std::string& doc_id);
  std::int64_t count(const std::string& kb, const std::string& revision);

  // A consistent snapshot for several reads: fn runs inside one read transaction.
  class Reader {
   public:
    std::optional<ScopeRow> scope(const std::string& kb, const std::string& revision);
    std::int64_t count(const std::string& kb, const std::string& revision);
    // Rows with id > after_id, ascending id, with their vectors.
    void rows(const std::string& kb, const std::string& revision, std::int64_t after_id,
              const std::function<void(std::int64_t id, const RowMeta&, const float* v,
                                       std::size_t n)>& fn);
    // (id, doc_id, chunk_index, chunk_id) of every row with id <= max_id, without the vectors.
    void keys(const std::string& kb, const std::string& revision, std::int64_t max_id,
              const std::function<void(std::int64_t, const RowMeta&)>& fn);
    void docs(const std::string& kb, const std::string& revision, std::int64_t after_seq,
              const std::function<void(const std::string& doc_id, const std::string& json)>& fn);
    void tombstones(const std::string& kb, const std::string& revision, std::int64_t after_seq,
                    const std::function<void(std::int64_t vec_id)>& fn);
    std::optional<RowMeta> lookup(std::int64_t id);

   private:
    friend class VectorDb;
    explicit Reader(VectorDb& db) : db_(db) {}
    VectorDb& db_;
  };
  void read(const std::function<void(Reader&)>& fn);
  // Single statements, each atomic on its own: the per-query fast path skips BEGIN/COMMIT.
  std::optional<ScopeRow> scope_row(const std::string& kb, const std::string& revision);
  std::vector<std::optional<RowMeta>> lookup(const std::vector<std::int64_t>& ids);

 private:
  friend class Reader;
  sqlite3_stmt* prepare(const char* sql);  // cached per SQL text; caller holds mu_
  void exec(const char* sql);
  int delete_doc_rows(const std::string& kb, const std::string& revision,
                      const std::string& doc_id);
  std::int64_t bump_seq(const std::string& kb, const std::string& revision);
  // One document's replacement inside the caller's write transaction.
  UpsertResult write_doc(const Scope& scope, const DocumentVectors& doc,
                         std::map<int, const ChunkVector*>& wanted);

  std::mutex mu_;
  sqlite3* db_ = nullptr;
  std::vector<std::pair<const char*, sqlite3_stmt*>> stmts_;
};

}  // namespace quarry::store::embedded
