// The catalog (SPEC §1, §10): one SQLite database per data directory, in WAL mode, holding
// knowledge bases, documents, chunks, the per-KB FTS5 keyword index and the audit log.
// Every write is one transaction and writes its audit row in that same transaction, so a crash
// leaves the previous state, never half a document. SQLite is included only inside this room.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/filter.h"

struct sqlite3;
struct fts5_api;

namespace quarry::catalog {

class FtsTokenizer;
class MemoryIndex;

struct KbRow {
  std::int64_t id = 0;
  std::string name;
  std::string config_json;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
};

struct KbStats {
  std::int64_t documents = 0;
  std::int64_t chunks = 0;
  std::int64_t markdown_bytes = 0;
  std::int64_t source_bytes = 0;
};

struct DocumentRow {
  std::string id;
  std::string kb;
  std::string filename;
  std::string title;
  std::string source_sha256;
  std::string content_sha256;
  std::string metadata_json = "{}";
  std::optional<std::string> subject_key;
  std::optional<std::string> subject_value;
  std::string converter;
  std::string raw_ext;
  std::int64_t source_bytes = 0;
  std::int64_t markdown_bytes = 0;
  std::int64_t body_offset = 0;
  std::int64_t chunk_count = 0;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
  std::string chunking;  // config_revision its chunks were cut under ("" before schema v5)
};

// The few columns grep needs of every document in scope.
struct DocumentRef {
  std::string id;
  std::string filename;
  std::optional<std::string> subject_key;
  std::optional<std::string> subject_value;
};

struct ChunkRow {
  int index = 0;
  std::string chunk_id;
  std::optional<std::string> parent_chunk;
  std::vector<std::string> heading_path;
  std::int64_t offset = 0;  // into the Markdown file on disk (front matter included)
  std::int64_t length = 0;
  int token_count = 0;
  std::string text;
};

struct AuditEntry {
  std::string actor;    // who: OS user, token id, ...
  std::string surface;  // cli | rest | mcp | library
  std::string action;   // kb.create, document.add, ...
  std::string kb;
  std::string target;  // document id, KB name, ...
  std::string details_json = "{}";
};

// A bearer token of the server (SPEC §10); the secret itself is never stored.
struct TokenRow {
  std::string id;  // ULID
  std::string name;
  std::string scope;            // read | write | admin
  std::string kbs_json = "[]";  // knowledge bases it may reach ('[]' = all)
  std::int64_t created_at = 0;
  std::int64_t revoked_at = 0;  // 0 while valid
};

// A deployed pump use case (SPEC §8): its validated config and its run state. Deploy rewrites
// the config and keeps the run state; `lease_owner` is the single-flight lease of a run.
struct PumpUseCaseRow {
  std::string name;
  std::string config_json;
  std::string config_revision;
  std::string embedder;  // the provider spec the use case embeds with ("" = none resolves)
  std::int64_t deployed_at = 0;
  int attempts = 0;  // consecutive failed runs
  bool parked = false;
  bool pending = false;  // a trigger is queued
  std::int64_t next_run_at = 0;
  std::int64_t last_run_at = 0;
  std::string last_error;  // "code: message"
  int last_failed = 0;
  int last_skipped = 0;
  std::string lease_owner;
  std::int64_t lease_at = 0;
};

// How a run ends, written with the lease's release.
struct PumpRunEnd {
  int attempts = 0;
  bool parked = false;
  bool repoke = false;  // queue another run (not drained, or a retry after a failure)
  std::int64_t next_run_at = 0;
  std::int64_t last_run_at = 0;
  std::string last_error;
  int last_failed = 0;
  int last_skipped = 0;
};

struct AuditRow : AuditEntry {
  std::int64_t id = 0;
  std::int64_t at = 0;
};

// BM25F parameters of the keyword ranking function (see docs/search.md).
struct Bm25Params {
  double k1 = 1.2;
  double b = 0.75;
  double w_title = 2.0;
  double w_headings = 1.0;
  double w_body = 1.0;
  bool robertson_idf = false;  // log((N-n+.5)/(n+.5)) floored, instead of Lucene's log(1+...)
};

struct KeywordQuery {
  std::string match;    // an FTS5 MATCH expression (built by search/, never raw user text)
  core::Filter filter;  // metadata filter pushed into SQL
  int limit = 10;
  Bm25Params params;
};

struct KeywordRow {
  std::int64_t rowid = 0;
  double raw_score = 0;  // BM25F, higher is better
  double max_score = 0;  // the query's theoretical maximum (for normalisation)
  bool loaded = false;   // doc and chunk filled by load_keyword_rows()
  bool keyed = false;    // only the keys filled, by load_keyword_keys()
  DocumentRow doc;       // the owning document
  ChunkRow chunk;        // with its text
};

// Index lifecycle rows (schema v4; SPEC §1, §7).
struct RevisionRow {
  std::string revision;
  std::string config_revision;
  std::string config_json;  // the KB config this revision's vectors were made with
  std::string model;        // the embedder identity
  int dimensions = 0;
  std::string store_id;
  std::string state;  // serving | building | previous
  std::int64_t created_at = 0;
  std::int64_t completed_at = 0;  // 0 while building
};

struct CoordinatesRow {
  std::string doc_id;
  std::string revision;
  std::string store_id;
  int chunk_count = 0;
  std::string content_sha256;
  std::string model;
  int dimensions = 0;
  std::int64_t embedded_at = 0;
};

struct FailureRow {
  std::string doc_id;
  std::string revision;
  std::string content_sha256;
  std::string code;
  std::string message;
  std::int64_t at = 0;
};

// A document that has no vectors for its current content under a revision.
struct PendingDocument {
  std::string doc_id;
  std::string content_sha256;
  std::int64_t updated_at = 0;
};

// Documents of a KB by their vector state under `revision` (see Catalog::vector_counts).
struct VectorCounts {
  std::int64_t documents = 0;
  std::int64_t ready = 0;   // coordinates for the current content under the revision
  std::int64_t failed = 0;  // tombstoned for the current content under the revision
  std::int64_t stale = 0;   // not ready, but current vectors under `older` exist
  std::int64_t pending() const { return documents - ready - failed; }
};

class Transaction;
class ReadTransaction;
class StmtCache;

class Catalog {
 public:
  // The reads made while it lives (one search) see one snapshot and take SQLite's locks once
  // (catalog/sqlite.h ReadTransaction). Nothing inside an outer transaction.
  class ReadSnapshot {
   public:
    explicit ReadSnapshot(const Catalog& c);
    ~ReadSnapshot();

   private:
    std::unique_ptr<ReadTransaction> tx_;
  };

  // Groups many writes into one transaction (each write's own becomes a savepoint of it):
  // a sweep commits a page of documents at once. Rolled back unless commit() is called.
  class Batch {
   public:
    explicit Batch(Catalog& c);
    ~Batch();
    void commit();

   private:
    std::unique_ptr<Transaction> tx_;
  };

  // Opens (creating if needed) and migrates the database at `path`.
  static std::unique_ptr<Catalog> open(const std::string& path);
  ~Catalog();
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  int schema_version() const;

  // Knowledge bases.
  KbRow create_kb(const std::string& name, const std::string& config_json, const AuditEntry& a);
  std::optional<KbRow> find_kb(const std::string& name) const;
  KbRow get_kb(const std::string& name) const;  // throws not_found
  std::vector<KbRow> list_kbs() const;
  void update_kb_config(const std::string& name, const std::string& config_json,
                        const AuditEntry& a);
  // Deletes the KB, its documents, chunks and keyword index; returns the deleted document ids.
  std::vector<std::string> delete_kb(const std::string& name, const AuditEntry& a);
  KbStats kb_stats(const std::string& name) const;
  // The KB's chunk count, cached per KB generation (every write bumps it), so a search can
  // report index_status without summing the KB's documents each time.
  std::int64_t chunk_count(const std::string& name) const;

  // Documents.
  std::optional<DocumentRow> find_document_by_filename(const std::string& kb,
                                                       const std::string& filename) const;
  std::optional<DocumentRow> find_document(const std::string& kb, const std::string& id) const;
  // Ordered by id; `after` is the cursor (last id of the previous page).
  std::vector<DocumentRow> list_documents(const std::string& kb, const std::string& after,
                                          int limit, const core::Filter& filter = {}) const;
  // Every document of `kb` matching `filter`, ordered by id: only id, name and subject.
  std::vector<DocumentRef> document_refs(const std::string& kb,
                                         const core::Filter& filter = {}) const;
  // Inserts or replaces the document row and all of its chunks in one transaction.
  void put_document(const DocumentRow& doc, const std::vector<ChunkRow>& chunks,
                    const AuditEntry& a);
  bool delete_document(const std::string& kb, const std::string& id, const AuditEntry& a);
  // Deletes every document of `kb` whose metadata matches `filter`; returns their ids.
  std::vector<std::string> delete_where(const std::string& kb, const core::Filter& filter,
                                        const AuditEntry& a);
  std::vector<ChunkRow> chunks_of(const std::string& kb, const std::string& doc_id) const;
  // Subject keys already used by documents of `kb` (for validating config changes).
  std::int64_t count_documents_matching(const std::string& kb, const core::Filter& filter) const;
  // Whether any document of `kb` matches (cheap: stops at the first; for index_status).
  bool has_documents(const std::string& kb, const core::Filter& filter = {}) const;

  // Keyword search over one KB's FTS5 index: ranked rowids and scores only (cheap); fetch the
  // rows a caller keeps with load_keyword_rows(). Throws invalid_argument for a malformed MATCH
  // expression (only reachable through the opt-in advanced syntax).
  std::vector<KeywordRow> keyword_search(const std::string& kb, const KeywordQuery& q) const;
  // The same ranking from this process's in-memory copy of the KB's index (memory_index.h):
  // built on a KB's second keyword query in this Catalog and rebuilt after any write to the KB.
  // `words` are the safe query's words; returns nullopt when the query must go to FTS5 (no
  // copy yet, or a word the tokenizer splits into several tokens, i.e. a phrase).
  std::optional<std::vector<KeywordRow>> keyword_search_cached(
      const std::string& kb, const std::vector<std::string>& words, int limit,
      const Bm25Params& p) const;
  // Off: every keyword query goes to FTS5 (tests compare the two paths).
  void set_memory_index_enabled(bool on) { memory_index_enabled_ = on; }
  void load_keyword_rows(KeywordRow* begin, KeywordRow* end) const;
  // Only what identifies each chunk (doc.id; chunk.index, chunk_id, parent_chunk), for a
  // fusion that ranks many candidates and reads the rows of its winners only (load_chunks).
  void load_keyword_keys(KeywordRow* begin, KeywordRow* end) const;
  // Rows for (document id, chunk index) keys of `kb` (vector hits come back from a store as
  // keys). A key whose chunk no longer exists comes back with loaded = false.
  struct ChunkKey {
    std::string doc_id;
    int chunk_index = 0;
  };
  std::vector<KeywordRow> load_chunks(const std::string& kb,
                                      const std::vector<ChunkKey>& keys) const;
  // Highlighted snippets of `texts` for the words of `query` (stemmed as the index stems them).
  std::vector<std::string> snippets(const std::string& query,
                                    const std::vector<const std::string*>& texts) const;

  std::vector<AuditRow> list_audit(int limit, const std::string& kb = "") const;
  // Appends an event to the activity log (audit) outside any other write.
  void log_event(const AuditEntry& a);
  // Activity log, newest first, ids below `before_id` (0 = from the newest).
  std::vector<AuditRow> list_audit_before(int limit, const std::string& kb,
                                          std::int64_t before_id) const;

  // --- tokens (tokens.cpp) -------------------------------------------------------------------
  void create_token(const TokenRow& row, const std::string& secret_hash, const AuditEntry& a);
  std::vector<TokenRow> list_tokens() const;
  std::optional<TokenRow> find_token_by_hash(const std::string& secret_hash) const;
  // False when no valid token has that id.
  bool revoke_token(const std::string& id, const AuditEntry& a);

  // --- the embedding pump (pump_rows.cpp) ----------------------------------------------------
  std::vector<PumpUseCaseRow> list_pump_use_cases() const;
  std::optional<PumpUseCaseRow> find_pump_use_case(const std::string& name) const;
  // Writes every row (config and state as given) and drops the use cases not among them with
  // their tombstones, in one transaction with its audit entry.
  void deploy_pump_use_cases(const std::vector<PumpUseCaseRow>& rows, const AuditEntry& a);
  // Takes the use case's lease when it is free or older than `stale_before` (ms), and clears
  // its pending flag (this run serves the queued trigger). False when another run holds it.
  bool claim_pump_lease(const std::string& name, const std::string& owner, std::int64_t now,
                        std::int64_t stale_before);
  // Takes over the lease `old_owner` holds (its process is known to be gone). False when the
  // lease changed hands meanwhile.
  bool take_over_pump_lease(const std::string& name, const std::string& old_owner,
                            const std::string& owner, std::int64_t now);
  // Releases the lease with the run's outcome. A trigger that arrived during the run stays
  // pending. False when the lease was not `owner`'s any more (reclaimed as stale).
  bool finish_pump_run(const std::string& name, const std::string& owner, const PumpRunEnd& end);
  // Queues a trigger; false for an unknown use case.
  // A trigger: queues a run, due now unless a retry is backing off (then at its time). A parked
  // use case gets one more attempt. False for an unknown use case.
  bool trigger_pump(const std::string& name, std::int64_t now);
  // The tombstone's (code, message), when (content hash, revision) has one.
  std::optional<std::pair<std::string, std::string>> pump_tombstone(const std::string& name,
                                                                    const std::string& content_hash,
                                                                    const std::string& key) const;
  // Keeps the newest 1,000 per use case.
  void put_pump_tombstone(const std::string& name, const std::string& content_hash,
                          const std::string& key, const std::string& code,
                          const std::string& message, std::int64_t at);
  std::int64_t pump_tombstone_count(const std::string& name) const;
  // Usage entries (`kind` run: a provider batch of up to 128 chunks; embed: one query text).
  // Entries older than 400 days are dropped as new ones come. One entry per element of
  // `chunks` (its chunk count), in one transaction.
  void add_pump_usage(const std::string& name, std::int64_t at, const std::vector<int>& chunks,
                      const std::string& kind);
  // name -> (entries, chunks) since `since` (ms).
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> pump_usage_since(
      std::int64_t since) const;
  std::int64_t pump_usage_entries_since(std::int64_t since) const;
  std::optional<std::string> pump_setting(const std::string& key) const;
  void set_pump_setting(const std::string& key, const std::optional<std::string>& value,
                        const AuditEntry& a);

  // --- index lifecycle (lifecycle_rows.cpp) ------------------------------------------------
  std::vector<RevisionRow> revisions(const std::string& kb) const;
  std::optional<RevisionRow> revision_in_state(const std::string& kb,
                                               const std::string& state) const;
  // Inserts or replaces the row (keyed by kb + revision).
  void put_revision(const std::string& kb, const RevisionRow& r);
  // Forgets a revision: its row, coordinates and tombstones (its vectors are the store's).
  void delete_revision(const std::string& kb, const std::string& revision);

  // Records that the store now holds `c.chunk_count` vectors of the document under
  // c.revision, and clears a tombstone of the same document and revision.
  void put_coordinates(const std::string& kb, const CoordinatesRow& c);
  std::vector<CoordinatesRow> coordinates_of(const std::string& kb,
                                             const std::string& doc_id) const;
  void delete_coordinates(const std::string& kb, const std::string& doc_id);
  // Records that the vectors of `revision` now live in store `store_id` (a store migration).
  void move_coordinates(const std::string& kb, const std::string& revision,
                        const std::string& store_id);
  // Documents whose coordinates remain though the document is gone (their vectors must go).
  std::vector<std::string> orphaned_coordinates(const std::string& kb) const;
  // Up to `limit` documents of `kb` without coordinates for their current content under
  // `revision` and not tombstoned for it, newest first. With `after`, only documents after it
  // in that order (a sweep's cursor: each page starts where the last one ended instead of
  // walking past every document already done, which made a sweep quadratic in the KB); with
  // `updated_since` (ms), only documents written since then.
  std::vector<PendingDocument> pending_documents(const std::string& kb, const std::string& revision,
                                                 int limit, const PendingDocument* after = nullptr,
                                                 std::int64_t updated_since = -1) const;
  // Counts for the KB (or the documents matching `filter`): ready/failed under `revision`,
  // stale = not ready under `revision` but with current vectors under `older` ("" for none).
  // Cost is linear in the KB's documents: cache it on generations().
  VectorCounts vector_counts(const std::string& kb, const std::string& revision,
                             const std::string& older, const core::Filter& filter = {}) const;

  void put_failure(const std::string& kb, const FailureRow& f);

  // Blue-green chunking: a building revision's own chunks of a document (for its content).
  void put_staged_chunks(const std::string& kb, const std::string& revision,
                         const std::string& doc_id, const std::string& content_sha256,
                         const std::vector<ChunkRow>& chunks);
  std::optional<std::vector<ChunkRow>> staged_chunks(const std::string& kb,
                                                     const std::string& revision,
                                                     const std::string& doc_id,
                                                     const std::string& content_sha256) const;
  // Replaces a document's chunks (and its keyword postings) with `chunks` cut under
  // `chunking`, leaving the Markdown and the document's hashes as they are.
  void replace_chunks(const std::string& kb, const std::string& doc_id, const std::string& chunking,
                      const std::vector<ChunkRow>& chunks);
  // The cut-over, in one transaction: `building` serves and the serving revision becomes
  // previous; with `adopt_chunking` set, every document's staged chunks of `building` (for its
  // current content) become its chunks, cut under `adopt_chunking`.
  void cut_over_revision(const std::string& kb, const std::string& building,
                         const std::string& adopt_chunking);
  // Documents whose chunks were cut under another chunking than `chunking` ('' rows excepted).
  std::vector<DocumentRow> documents_chunked_otherwise(const std::string& kb,
                                                       const std::string& chunking) const;
  // (document generation, vector generation) of the KB: the first moves with every document
  // write, the second with every lifecycle row written; status caches key on both.
  std::pair<std::int64_t, std::int64_t> generations(const std::string& kb) const;
  std::vector<FailureRow> failures(const std::string& kb, const std::string& revision,
                                   int limit = 1000) const;

  sqlite3* handle() const { return db_; }  // for tests (integrity checks)
  // Rows this connection has written so far (moves with every local write; status caches
  // use it to tell their own writes from other processes').
  std::int64_t local_changes() const;

 private:
  explicit Catalog(sqlite3* db);
  sqlite3* db_;
  std::unique_ptr<StmtCache> stmts_;  // this connection's statements of fixed text
  std::string path_;  // of the database file: the key of the process-wide keyword copies
  fts5_api* fts5_ = nullptr;
  std::unique_ptr<FtsTokenizer> tokenizer_;
  bool memory_index_enabled_ = true;
  // Keyword queries per KB on this connection (the in-memory copy is built from the second).
  mutable std::unordered_map<std::int64_t, int> keyword_queries_;
  mutable std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>>
      chunk_counts_;  // kb id -> (generation, chunks)
};

}  // namespace quarry::catalog
