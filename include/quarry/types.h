// Value types of the public API: documents, hits, requests and responses.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quarry/config.h"

namespace quarry {

struct Subject {
  std::string key;
  std::string value;
};

struct IndexStatus {
  std::string keyword = "not_built";  // not_built | building | ready | stale | failed
  std::string vector = "not_built";
};

// A permanent embedding failure of one document under one revision (SPEC §7).
struct VectorFailure {
  std::string doc_id;
  std::string code;  // content_too_large, no_content, too_many_chunks, input_rejected
  std::string message;
  std::string at;
};

struct Document {
  std::string id;  // ULID
  std::string kb;
  std::string filename;
  std::string title;
  std::string source_sha256;
  std::string content_sha256;
  std::string metadata_json = "{}";
  std::optional<Subject> subject;
  std::string converter;
  std::string raw_ext;
  std::int64_t source_bytes = 0;
  std::int64_t markdown_bytes = 0;
  std::int64_t chunk_count = 0;
  std::string created_at;  // RFC 3339
  std::string updated_at;
  std::string markdown_path;  // <data>/kb/<name>/docs/<id>.md (absolute)
  std::string raw_path;       // <data>/kb/<name>/raw/<id>.<ext> (absolute)
  IndexStatus index_status;   // keyword is indexed in the same transaction as the document
  std::optional<VectorFailure> vector_failure;  // why, when index_status.vector is "failed"
};

// One chunk of a document (SPEC §3), as search returns it: where it sits in the document's
// Markdown body (`body_offset`: into what read_markdown() and GET .../markdown return) and in
// the file on disk (`offset`, as hits report it), with its heading path and text. Windows of a
// long section overlap, so consecutive chunks may share bytes.
struct ChunkInfo {
  int index = 0;
  std::string chunk_id;
  std::optional<std::string> parent_chunk;
  std::vector<std::string> heading_path;
  std::int64_t offset = 0;
  std::int64_t body_offset = 0;
  std::int64_t length = 0;
  int token_count = 0;
  std::string text;
};

// The vector side of a KB (SPEC §1, §7): its revisions and its documents by status under the
// current (target) revision.
struct VectorIndexInfo {
  std::string serving_revision;   // answers vector queries ("" when nothing serves)
  std::string building_revision;  // blue-green build in progress ("" when none)
  std::string previous_revision;  // left by the last cut-over until collected ("" when none)
  std::int64_t documents = 0;
  std::int64_t ready = 0;
  std::int64_t stale = 0;    // vectors only under the serving (older) revision
  std::int64_t pending = 0;  // not ready and not failed (stale included)
  std::int64_t failed = 0;
  std::int64_t stored = 0;              // chunk vectors the store holds under the serving revision
  std::vector<VectorFailure> failures;  // newest first, at most 100
  // Why the embedder cannot embed now, when it cannot (pending documents stay pending):
  // blocked_address (the SSRF guard refuses its endpoint: a setting to change) or
  // engine_unavailable, with a message that says what to do. Empty when it can.
  std::string unavailable_code;
  std::string unavailable;
};

struct KbInfo {
  std::string name;
  KbConfig config;
  std::string config_json;
  std::int64_t documents = 0;
  std::int64_t chunks = 0;
  std::int64_t markdown_bytes = 0;
  std::int64_t source_bytes = 0;
  std::string created_at;
  std::string updated_at;
  IndexStatus index_status;
  std::string revision;         // SPEC §1: chunking + counter + embedder identity
  std::string config_revision;  // the chunking half alone
  VectorIndexInfo vectors;      // empty without an embedder
  // How documents are cut now: the budgets in use (the config's, capped at the embedding
  // model's input) and the tokenizer they are counted with (SPEC §3).
  int chunk_max_tokens = 0;
  int chunk_overlap_tokens = 0;
  std::string chunk_tokenizer;
};

// What Engine::set_kb would do with the same arguments, computed by the same code
// (Engine::plan_kb_change, the REST dry run): the resulting config and what it rebuilds.
struct KbChangePlan {
  std::string kb;
  KbConfig config;  // the config after the change
  std::string config_json;
  std::string revision_before, revision_after;                // SPEC §1
  std::string config_revision_before, config_revision_after;  // the chunking half
  // Vectors: "none" (no embedder before or after: nothing to embed), "unchanged" (the revision
  // stays), "first" (a KB's first embedding revision: every document is embedded), "blue_green"
  // (a new revision builds while the serving one answers), "replace" (a new revision replaces
  // the serving one at once: nothing embedded to keep, the store changed, or cutover
  // immediate), "switch_back" (the config returns to a revision that is still complete:
  // instant), "drop" (the embedder is removed: every vector is dropped).
  std::string vectors = "none";
  bool re_embed = false;  // documents are embedded anew (first, blue_green, replace)
  // Chunking: every document is cut anew; `re_cut_at` says when: "now" (in the call) or
  // "cutover" (the building revision's chunks are staged and replace the serving ones when it
  // completes); "" when nothing is re-cut.
  bool re_cut = false;
  std::string re_cut_at;
  std::int64_t documents = 0;     // the KB's documents (each one re-cut / re-embedded)
  std::int64_t chunks = 0;        // its chunks now
  std::int64_t chunks_after = 0;  // after the change (== chunks when nothing is re-cut)
};

struct Hit {
  std::string kb;
  std::string doc_id;
  std::string filename;
  std::string title;
  std::string chunk_id;
  int chunk_index = 0;
  std::optional<std::string> parent_chunk;
  std::vector<std::string> heading_path;
  std::int64_t offset = 0;  // into the Markdown file (kb/<name>/docs/<id>.md)
  std::int64_t length = 0;
  std::string snippet;  // matched terms wrapped in ** **
  // The snippet without the markers the engine added (the document's own "**" stay), and the
  // matched terms as [begin, end) offsets into it, in Unicode code points (what a JavaScript
  // or Python client indexes by, after converting UTF-16 for JavaScript: see docs/search.md).
  std::string snippet_text;
  std::vector<std::pair<std::size_t, std::size_t>> highlights;
  double score = 0;  // [0, 1], higher is better
  double raw_score = 0;
  std::string metric;  // bm25 | grep | ...
  std::optional<Subject> subject;
  std::string metadata_json = "{}";
};

struct SearchRequest {
  std::string kb;
  std::string query;
  std::optional<Mode> mode;  // unset: kDefaultMode (auto)
  // Hybrid overrides of the KB's `hybrid` config; unset = the KB's setting.
  std::optional<std::string> fusion;     // interpolation | rrf
  std::optional<double> semantic_ratio;  // 0..1
  int top_k = 10;
  double min_score = 0;
  std::string filter_json;  // §4 filter language; "" = none
  bool advanced = false;    // opt-in FTS5 syntax (phrases, AND/OR/NOT, prefix*, NEAR)
};

struct SearchResponse {
  std::string kb;
  Mode mode = Mode::keyword;  // the mode that answered
  std::vector<Hit> hits;
  std::vector<std::string> degraded;  // reasons, when hybrid/auto fell back
  // auto only: a query that looks like a regular expression or a code identifier gets a word
  // that grep matches it as written (keyword search reads only its words); empty otherwise.
  std::string hint;
  // Hybrid: each mode's own list (best first, top_k), labelled, besides the fused hits.
  std::vector<std::pair<std::string, std::vector<Hit>>> per_mode;
  IndexStatus index_status;
  // Whether the KB has an embedder: without one, index_status.vector is not_built for good,
  // and the CLI's text output leaves it out (the JSON keeps the field for every KB).
  bool has_embedder = false;
  double took_ms = 0;
};

struct GrepRequest {
  std::string kb;
  std::string pattern;
  bool literal = false;
  bool ignore_case = false;
  bool word = false;    // the pattern matches whole words only (grep -w)
  bool invert = false;  // the lines that do NOT match (grep -v); they carry no ranges
  int before_context = 0;
  int after_context = 0;
  std::size_t max_matches = 1000;
  std::string filter_json;  // restricts the documents searched
};

struct GrepLineOut {
  int line = 0;
  std::string text;
};

struct GrepHit {
  std::string kb;
  std::string doc_id;
  std::string filename;
  int line = 0;
  std::string text;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::vector<GrepLineOut> before, after;
  std::optional<Subject> subject;
};

struct GrepResponse {
  std::string kb;
  std::vector<GrepHit> matches;
  bool truncated = false;
  std::size_t files_searched = 0;
  std::size_t files_matched = 0;
  double took_ms = 0;
};

// One file's outcome in an ingest batch.
struct IngestItem {
  std::string path;     // as given (file) or relative to the ingested directory
  std::string status;   // added | updated | unchanged | failed
  std::string doc_id;   // empty when failed
  std::string code;     // error code when failed
  std::string message;  // error message when failed
  std::int64_t chunks = 0;
  // Vector index status of this document (KBs with an embedder) when ingest returned: usually
  // not_built (pending until a sweep); ready for unchanged content already embedded; failed
  // with vector_code/vector_message when that content is tombstoned. Never undoes the document.
  std::string vector_status;
  std::string vector_code;
  std::string vector_message;
  // What conversion had to leave out or change, for a document that was still ingested
  // ("text nested deeper than 32 levels was cut ...", "table truncated to 10000 data rows",
  // "invalid UTF-8 replaced with U+FFFD"). Empty when nothing was.
  std::vector<std::string> warnings;
};

struct IngestProgress {
  std::size_t done = 0;
  std::size_t total = 0;
  std::string current;
};

struct IngestOptions {
  bool replace = false;              // update a changed document of the same name in place
  std::string metadata_json;         // merged into every document's metadata
  std::vector<std::string> include;  // globs on the path relative to the directory
  std::vector<std::string> exclude;
  std::function<void(const IngestProgress&)> progress;
  // Called with each file's outcome as soon as it is committed (or failed), in order.
  std::function<void(const IngestItem&)> on_item;
  // Set it to stop a directory's ingest after the document in hand (committed whole, never
  // half); the report says `cancelled` and lists what was done. Ingesting again resumes:
  // what was committed comes back `unchanged`.
  const std::atomic<bool>* cancel = nullptr;
};

// A page of list_documents.
struct DocumentPage {
  std::vector<Document> documents;
  std::string next_cursor;  // "" when this is the last page
};

struct IngestReport {
  std::vector<IngestItem> items;
  int added = 0, updated = 0, unchanged = 0, failed = 0;
  std::int64_t bytes = 0;
  double took_ms = 0;
  bool cancelled = false;  // `cancel` stopped it; `not_reached` files were left as they were
  std::size_t not_reached = 0;
};

// Progress of a reindex sweep (SPEC §7): per revision being built.
struct ReindexProgress {
  std::string kb;
  std::string revision;
  std::int64_t total = 0;  // documents pending when the sweep (re)counted
  std::int64_t done = 0;   // documents embedded or tombstoned so far
  std::int64_t failed = 0;
  double rate = 0;   // documents per second
  double eta_s = 0;  // seconds left at that rate
};

struct ReindexOptions {
  std::function<void(const ReindexProgress&)> progress;
  const std::atomic<bool>* cancel = nullptr;  // set it to stop; the sweep resumes later
  int workers = 0;                            // provider calls in flight (0: automatic)
  int batch_chunks = 256;                     // chunks per provider call
  std::int64_t max_documents = -1;            // stop after this many (-1: all)
  bool collect_previous = true;               // drop the revision the last cut-over left
  // While this process answers searches (one running or one in the last 100 ms), the sweep
  // works at most this share of the time, resting after each page, so that queries keep their
  // latency (docs/lifecycle.md). 1: never rests.
  double foreground_duty = 1.0;
};

struct ReindexReport {
  std::string kb;
  std::string serving_revision;
  std::string target_revision;
  std::int64_t documents = 0;        // documents embedded (all revisions)
  std::int64_t chunks = 0;           // chunk vectors written to the store
  std::int64_t chunks_embedded = 0;  // of those, sent to the provider
  std::int64_t chunks_cached = 0;    // of those, found in the embedding cache
  std::int64_t provider_calls = 0;
  std::int64_t failed = 0;   // documents tombstoned by this sweep
  std::int64_t pending = 0;  // documents still pending afterwards (all revisions)
  std::int64_t orphans = 0;  // vectors of deleted documents collected
  bool cancelled = false;
  bool cut_over = false;   // a blue-green build completed and now serves
  std::string error_code;  // why the sweep stopped early (a retryable provider failure...)
  std::string error_message;
  double took_ms = 0;
  double rested_ms = 0;  // of took_ms, spent resting for this process's searches
};

// How `migrate_store` reports and stops. Stopped (cancel set; checked after each page of 200
// documents) it empties the target of what it copied and throws `cancelled`: the KB is left
// exactly as it was, and running it again starts the copy over.
struct StoreMigrationOptions {
  std::function<void(std::int64_t done, std::int64_t total)> progress;  // documents looked at
  const std::atomic<bool>* cancel = nullptr;
};

// What `migrate_store` did (SPEC §6): vectors of the serving revision copied, not re-embedded.
struct StoreMigrationReport {
  std::string kb;
  std::string from_store;
  std::string to_store;
  std::string revision;
  std::int64_t documents = 0;  // documents whose vectors moved
  std::int64_t chunks = 0;     // chunk vectors written to the new store and counted there
  std::int64_t pending = 0;    // documents not embedded yet: the scheduler embeds them there
  double took_ms = 0;
};

// An entry of the activity log (SPEC §10: every write, who, what, when, through which surface).
struct ActivityEntry {
  std::int64_t id = 0;  // increasing; page with `before`
  std::string at;       // RFC 3339
  std::string actor;    // OS user, token id, ...
  std::string surface;  // cli | rest | mcp | library
  std::string action;   // kb.create, document.add, token.create, ...
  std::string kb;
  std::string target;
  std::string details_json = "{}";
};

// A bearer token of the server (SPEC §10). Scopes: read < write (spends: ingest, edits,
// re-embedding) < admin (knowledge-base settings, tokens). The secret is shown once.
struct TokenInfo {
  std::string id;
  std::string name;
  std::string scope;             // read | write | admin
  std::vector<std::string> kbs;  // the knowledge bases it may reach; empty = all
  std::string created_at;
  std::string revoked_at;  // "" while valid
};

struct NewToken {
  TokenInfo token;
  std::string secret;  // "qry_..." — stored only as a hash, never shown again
};

}  // namespace quarry
