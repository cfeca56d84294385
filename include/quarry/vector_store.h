// The vector-store port (SPEC §6). A store owns the vectors of many KBs; every call is scoped
// to one KB and one revision (a KB's vectors for one embedder + chunking, §1), and a query must
// never see another KB's or another revision's vectors: that leak is the worst bug there is.
// The built-ins (embedded, memory, chroma, qdrant, pgvector) implement it, and so can an
// application's own store, registered with quarry::register_store() (quarry/plugin.h,
// docs/plugins.md). Every store passes the same contract suite (tests/store/contract_test.cpp).
//
// Keys are (kb, document, chunk_index). upsert() of a document replaces all of that document's
// chunks in the scope (never appends): after it, exactly the given chunks exist.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "quarry/filter.h"
#include "quarry/settings.h"

namespace quarry {

struct StoreCapabilities {
  bool metadata_filter = true;
  bool hybrid = false;
  bool namespaces = false;
  bool hard_delete = true;
  bool native_dimensions = false;
  bool embeds_on_write = false;        // the store embeds text itself (the `plugin` mode)
  std::string tenancy = "collection";  // collection | namespace | row_filter
};

// Which vectors a call addresses: one KB under one revision, with that revision's dimensions.
struct StoreScope {
  std::string kb;
  std::string revision;
  int dimensions = 0;
};

struct ChunkVector {
  int chunk_index = 0;
  std::string chunk_id;       // the chunk's citation UUID
  std::vector<float> vector;  // dimensions long (platform mode); empty in plugin mode
  std::string text;           // for stores that embed on write; may be empty otherwise
};

// One document's chunks. `metadata_json` is the JSON text of the document's metadata object
// ("" counts as {}): filters (§4) and delete_where() evaluate against it.
struct DocumentVectors {
  std::string doc_id;
  std::string metadata_json = "{}";
  std::vector<ChunkVector> chunks;
};

struct UpsertResult {
  int written = 0;
  int skipped = 0;  // chunks already stored with identical vectors
};

struct StoreHit {
  std::string doc_id;
  int chunk_index = 0;
  std::string chunk_id;
  double raw_score = 0;  // the store's metric, e.g. cosine distance (lower is closer)
  double score = 0;      // normalised to [0, 1], higher is better: 1 - cosine_distance / 2
  std::string metric = "cosine_distance";
};

struct VectorQuery {
  std::vector<float> vector;  // platform mode
  std::string text;           // plugin mode (stores that embed at query time)
  int top_k = 10;             // 0: an availability probe, returns nothing
  Filter filter;              // evaluated against document metadata, pushed into the store
};

// A caller's transaction that a store may join (Postgres); others ignore it.
struct StoreTransaction {
  virtual ~StoreTransaction() = default;
};

class VectorStore {
 public:
  virtual ~VectorStore() = default;

  virtual std::string id() const = 0;  // "embedded", "memory", "pgvector", ...
  virtual StoreCapabilities capabilities() const = 0;

  // Throws Error(dimension_mismatch) when a vector's length differs from scope.dimensions, or
  // the scope already holds vectors of another length.
  virtual UpsertResult upsert(const StoreScope& scope, const DocumentVectors& doc,
                              StoreTransaction* txn = nullptr) = 0;
  // Several documents of one scope: the same outcome as upserting them one by one in order,
  // one result per document, in fewer round trips where the store is remote. Document ids must
  // be distinct (invalid_argument); every document is checked (chunk indexes, dimensions)
  // before anything is written. A failure part-way may leave earlier documents of the call
  // written: each document's replacement is whole, and upserting the call again converges.
  // The default checks (check_upsert_batch), then calls upsert() per document.
  virtual std::vector<UpsertResult> upsert_many(const StoreScope& scope,
                                                const std::vector<DocumentVectors>& docs,
                                                StoreTransaction* txn = nullptr);
  // At most q.top_k hits, best first; only vectors of this scope whose document matches the
  // filter. A filtered query returns k hits whenever k chunks match.
  virtual std::vector<StoreHit> query(const StoreScope& scope, const VectorQuery& q) const = 0;

  // Deletes return how many chunk vectors went. kb-wide deletes cover every revision.
  virtual int delete_document(const std::string& kb, const std::string& doc_id,
                              StoreTransaction* txn = nullptr) = 0;
  virtual int delete_kb(const std::string& kb, StoreTransaction* txn = nullptr) = 0;
  // Throws Error(invalid_argument) for an empty filter (delete_kb deletes everything).
  virtual int delete_where(const std::string& kb, const Filter& filter,
                           StoreTransaction* txn = nullptr) = 0;
  // Deletes every revision of the KB except `keep` (after a blue-green cut-over).
  virtual int delete_other_revisions(const std::string& kb, const std::string& keep) = 0;
  virtual bool has(const StoreScope& scope, const std::string& doc_id) const = 0;
  // Vectors stored for the scope.
  virtual std::int64_t count(const StoreScope& scope) const = 0;

  // Default: a top_k = 0 query that must not throw.
  virtual bool is_available() const;
};

// The checks every upsert_many makes before writing: distinct document ids, distinct chunk
// indexes per document, and each vector `scope.dimensions` long (when > 0); a chunk without a
// vector is refused (mode_unavailable) unless `vectors_optional` (stores that embed on write).
// `store` names the store in the errors.
void check_upsert_batch(const std::string& store, const StoreScope& scope,
                        const std::vector<DocumentVectors>& docs, bool vectors_optional);

// Cosine distance in [0, 2] -> score in [0, 1] (1 = same direction).
inline double cosine_score(double distance) {
  double s = 1.0 - distance / 2.0;
  return s < 0 ? 0 : (s > 1 ? 1 : s);
}

struct StoreContext {
  std::string data_dir;  // a store that keeps files keeps them under <data_dir>/vectors/
  // Looks up a secret by name (the secret store, then the environment); "" when unknown.
  std::function<std::string(const std::string&)> secret;
};

// Builds a store from a KB's `store.settings`. Throws quarry::Error(invalid_argument) naming
// the setting for bad settings (unknown keys included); connecting may wait for first use.
using StoreFactory =
    std::function<std::unique_ptr<VectorStore>(const Settings& settings, const StoreContext&)>;

}  // namespace quarry
