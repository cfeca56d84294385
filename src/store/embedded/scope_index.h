// The in-memory view of one (kb, revision) inside one store object, kept in step with
// vectors.db, which other store objects and other processes may write at any time.
//
// How a query stays correct without reloading everything:
//   * Every committed change to a scope bumps scopes.seq; row ids only grow (AUTOINCREMENT);
//     a removed row leaves a tombstone (seq, id). A query first reads the scope row (one
//     indexed lookup) and does nothing more when (epoch, seq) are what it already reflects.
//   * Small scopes (< hnsw_threshold rows) live entirely in `mem_`: a contiguous matrix of
//     normalised f32 rows (and the same rows in f16: large scans read those first, then re-score
//     the few rows that could still be in the top k from f32) scanned exactly. New rows are
//     appended, tombstoned rows removed.
//   * Large scopes answer from an HNSW index stamped (epoch, seq S, max id V): it holds exactly
//     the rows live at S with id <= V. On top of it: `mem_` holds the rows with id > V (the
//     delta, scanned exactly) and `dead_` the index keys tombstoned after S (excluded with a
//     USearch predicate). Index and delta are disjoint by id, and a replaced chunk gets a new
//     id while its old id is dead, so a query can return neither a deleted vector nor the same
//     key twice. When the delta or the dead set grows past a threshold the index is extended
//     (or rebuilt from the db) and re-stamped.
//   * The index file on disk is shared: a reader maps it (view) and applies the delta from the
//     db; it is stale when its epoch differs or tombstones it would need were purged
//     (stamp.seq < tomb_floor), corrupt when its header or USearch rejects it; both rebuild.
//   * Queries answer from memory: the (kb, revision) scope row is the only SQLite read of a query
//     that finds nothing new. Index keys map to (doc, chunk_index, chunk_id) through `keys_`,
//     loaded on a scope's second query (or first filtered one) from a covering index of
//     vectors.db (never the vector blobs), or filled by an in-process build;
//     only a cold reader's first query looks its few hits up by rowid, so a one-shot process
//     never reads every row's metadata.
//   * Filters are evaluated once per document (core::filter_matches on the cached metadata) and
//     cached per filter; selective filters (few allowed chunks) scan the allowed set exactly,
//     others use a USearch predicate, falling back to exact when HNSW finds fewer than k.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/embedded/db.h"
#include "store/embedded/hnsw.h"
#include "store/vector_store.h"

namespace quarry::store::embedded {

struct Settings {
  std::int64_t hnsw_threshold = 20000;  // rows; below: exact scan, from here: HNSW
  HnswParams hnsw;
  unsigned threads = 1;  // index build and exact-scan threads
};

struct ScopeStats {
  bool hnsw = false;
  bool view = false;  // the index is the memory-mapped file
  std::size_t index_size = 0, delta = 0, dead = 0;
  int rebuilds = 0;  // index builds from the db (not opens of a file)
};

class ScopeIndex {
 public:
  ScopeIndex(VectorDb& db, std::string index_path, std::string kb, std::string revision,
             const Settings& settings);
  ~ScopeIndex();  // saves an in-memory index that is ahead of the file

  std::vector<StoreHit> query(const Query& q, int scope_dims);
  ScopeStats stats();
  void drop_file();  // the scope was deleted: forget the file and the memory

 private:
  struct MemRows {
    std::vector<std::int64_t> ids;
    std::vector<std::uint32_t> doc;
    std::vector<RowMeta> meta;
    std::vector<float> matrix;
    std::vector<std::uint16_t> half;  // the same rows in f16, for the exact scan's first pass
    std::unordered_map<std::int64_t, std::size_t> pos;
    void add(std::int64_t id, std::uint32_t d, const RowMeta& m, const float* v, std::size_t n);
    bool remove(std::int64_t id, std::size_t dims);
    void clear();
  };
  struct KeyMeta {  // what a hit from the index needs besides its key
    std::uint32_t doc = 0;
    int chunk_index = 0;
    std::string chunk_id;
  };
  struct FilterEntry {
    std::string key;
    std::uint64_t version = 0;
    std::vector<char> match;          // per doc ordinal
    std::int64_t allowed_index = -1;  // allowed live keys in the index (-1: not counted)
  };

  // need_docs: every document's metadata (filters); need_keys: the index keys' `keys_`.
  bool current(const std::optional<ScopeRow>& row, bool need_docs, bool need_keys) const;
  void refresh(bool need_docs, bool need_keys);  // caller holds mu_ exclusively
  void full_load(const ScopeRow& row, VectorDb::Reader& r);
  void incremental(const ScopeRow& row, VectorDb::Reader& r);
  void build_index_from_db(const ScopeRow& row, VectorDb::Reader& r);
  void maybe_extend();
  void load_keys(VectorDb::Reader& r);
  void save_index();
  std::uint32_t doc_ordinal(const std::string& doc_id);
  void set_doc(const std::string& doc_id, const std::string& json);
  std::shared_ptr<FilterEntry> filter_entry(const core::Filter& f);
  std::vector<StoreHit> search(const std::vector<float>& q, std::size_t k,
                               const core::Filter& filter);
  void reset();

  VectorDb& db_;
  const std::string path_, kb_, revision_;
  const Settings settings_;

  std::shared_mutex mu_;
  bool loaded_ = false;
  std::int64_t epoch_ = 0, seq_ = 0, max_id_ = 0;
  int dims_ = 0;
  std::uint64_t version_ = 0;  // bumped on every change to what a query sees

  bool docs_loaded_ = false;  // doc_meta_ holds every document's metadata
  std::vector<std::string> doc_ids_;
  std::vector<nlohmann::json> doc_meta_;
  std::unordered_map<std::string, std::uint32_t> doc_ord_;

  MemRows mem_;
  std::unique_ptr<HnswIndex> index_;
  IndexStamp stamp_;
  std::unordered_set<std::uint64_t> dead_;
  bool keys_loaded_ = false;
  std::unordered_map<std::uint64_t, KeyMeta> keys_;  // every live index key
  std::atomic<std::uint64_t> queries_{0};
  std::size_t unsaved_ = 0;  // rows added to the index since it was last written
  int rebuilds_ = 0;

  std::mutex filter_mu_;
  std::list<std::shared_ptr<FilterEntry>> filters_;  // most recent first, a few kept
};

}  // namespace quarry::store::embedded
