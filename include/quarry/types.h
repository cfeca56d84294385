// Value types of the public API: documents, hits, requests and responses.
#pragma once

#include <cstdint>
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
  double score = 0;     // [0, 1], higher is better
  double raw_score = 0;
  std::string metric;  // bm25 | grep | ...
  std::optional<Subject> subject;
  std::string metadata_json = "{}";
};

struct SearchRequest {
  std::string kb;
  std::string query;
  std::string mode = "keyword";  // keyword | grep | vector | hybrid | auto
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
  std::string mode;  // the mode that answered
  std::vector<Hit> hits;
  std::vector<std::string> degraded;  // reasons, when hybrid/auto fell back
  // Hybrid: each mode's own list (best first, top_k), labelled, besides the fused hits.
  std::vector<std::pair<std::string, std::vector<Hit>>> per_mode;
  IndexStatus index_status;
  double took_ms = 0;
};

struct GrepRequest {
  std::string kb;
  std::string pattern;
  bool literal = false;
  bool ignore_case = false;
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
  // Vector indexing of this document (KBs with an embedder): ready, not_built or failed with
  // vector_code/vector_message. A failure never undoes the document or its keyword index.
  std::string vector_status;
  std::string vector_code;
  std::string vector_message;
};

struct IngestReport {
  std::vector<IngestItem> items;
  int added = 0, updated = 0, unchanged = 0, failed = 0;
  std::int64_t bytes = 0;
  double took_ms = 0;
};

struct IngestProgress {
  std::size_t done = 0;
  std::size_t total = 0;
  std::string current;
};

}  // namespace quarry
