// The catalog's rows (SPEC §1, §7, §8, §10): what every table of the port (catalog/catalog.h)
// reads and writes, whatever backend stores it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/filter.h"

namespace quarry::catalog {

// A knowledge base resolved once per request (KbTable::get): every other table is addressed by
// it, so a request looks its KB up by name once, not again in each call. Valid while the KB
// exists; a writer resolves it under the writer lock, a reader inside its read snapshot.
struct KbRef {
  std::int64_t id = 0;
  std::string name;
};

struct KbRow {
  std::int64_t id = 0;
  std::string name;
  std::string config_json;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
  KbRef ref() const { return {id, name}; }
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
  std::string match;      // an FTS5 MATCH expression: built by search/, or the user's own text
  bool advanced = false;  // when it is the user's own text (FTS5 may refuse it: invalid_argument)
  core::Filter filter;    // metadata filter pushed into SQL
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

// A chunk addressed by (document id, chunk index) (vector hits come back from a store as keys).
struct ChunkKey {
  std::string doc_id;
  int chunk_index = 0;
};

}  // namespace quarry::catalog
