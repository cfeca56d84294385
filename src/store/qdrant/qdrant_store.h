// The `qdrant` vector store (SPEC §6): a Qdrant server spoken to over its REST API through
// src/net/ (SSRF guard, retries, timeouts). Settings and trade-offs: docs/stores.md ("qdrant").
//
// Tenancy, chosen in settings (reported truthfully by capabilities().tenancy):
//   namespace  (default) one collection per revision, shared by every KB on that revision; each
//              point carries its KB in the payload field quarry_kb, indexed as a keyword with
//              is_tenant: true (Qdrant's multitenancy layout), and EVERY request is filtered by
//              it. Fewest collections; Qdrant's recommended layout for many tenants.
//   collection one collection per (KB, revision). Strongest isolation, more collections.
// Either way collections are cosine-distance, named deterministically from the settings'
// collection_prefix and the revision (and KB), so the store needs no state of its own.
//
// Point ids are UUIDs derived from sha256(kb, doc_id, chunk_index) (point_id()), so a re-ingest
// overwrites instead of appending. Payload: Quarry's keys are top-level "quarry_*" fields, the
// document's metadata lives under "m" (sanitised: see payload_metadata()), so the two never
// collide.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/filter.h"
#include "net/http_client.h"
#include "net/retry.h"
#include "store/settings_reader.h"
#include "store/vector_store.h"

namespace quarry::store::qdrant {

// Payload keys of every point.
inline constexpr const char* kKbKey = "quarry_kb";
inline constexpr const char* kRevisionKey = "quarry_rev";
inline constexpr const char* kDocKey = "quarry_doc";
inline constexpr const char* kIndexKey = "quarry_chunk";
inline constexpr const char* kChunkIdKey = "quarry_chunk_id";
// 16 hex digits of sha256 over the vector's float32 bytes and the rest of the payload: an
// identical re-upsert is detected without reading vectors back.
inline constexpr const char* kShaKey = "quarry_sha";
// Keyword array of every metadata path present (for $exists, see translate_filter()).
inline constexpr const char* kHasKey = "quarry_has";
inline constexpr const char* kMetaKey = "m";  // the document's metadata

// api_key_secret names the secret sent as the `api-key` header.
struct QdrantSettings : RemoteSettings {
  QdrantSettings() { url = "http://127.0.0.1:6333"; }
  std::string tenancy = "namespace";         // namespace | collection (see above)
  std::string collection_prefix = "quarry";  // [A-Za-z0-9_-], 1..40 characters
  int batch_size = 256;                      // points per upsert / scroll page
  bool exact = false;                        // search without the HNSW index (exact, slower)
  int hnsw_ef = 0;                           // per-query HNSW breadth; 0: the collection's default
  int hnsw_m = 16;                           // HNSW parameters of collections this store creates
  int hnsw_ef_construct = 100;
};

// Throws Error(invalid_argument) naming the offending key (unknown keys included).
QdrantSettings parse_qdrant_settings(const nlohmann::json& settings);
// The keys parse_qdrant_settings() reads, with QdrantSettings' defaults.
PluginSchema qdrant_store_schema();

// namespace: "<prefix>_rev_<slug of revision>_<12 hex of sha256(revision)>";
// collection: "<prefix>_kb_<12 hex of sha256(kb)>_<12 hex of sha256(kb, revision)>".
std::string collection_name(const QdrantSettings& s, const std::string& kb,
                            const std::string& revision);
// The name prefix shared by every collection of the KB (collection tenancy) or of the store
// (namespace tenancy): how the store finds them again in GET /collections.
std::string collection_family(const QdrantSettings& s, const std::string& kb);

// A UUID (version 8, RFC 9562 "custom": the first 128 bits of sha256 over kb, doc_id and
// chunk_index, separated by NUL bytes, with the version and variant bits set). Qdrant takes a
// UUID or an unsigned integer as a point id; a hash of the key keeps it deterministic.
std::string point_id(const std::string& kb, const std::string& doc_id, int chunk_index);

// The document metadata as stored under "m": objects kept, scalars kept (integers beyond int64
// become doubles, as core::to_scalar() does), arrays and keys no filter field can name dropped.
// Arrays are dropped because Qdrant matches an array if ANY element matches, while Quarry never
// compares a scalar equal to an array; only $ne/$nin/$exists can match one, and those hold for a
// missing key too (presence is answered by kHasKey).
nlohmann::json payload_metadata(const nlohmann::json& metadata);
// Every path of the metadata a filter field can name (objects, arrays and null included).
nlohmann::json present_paths(const nlohmann::json& metadata);

// The filter as one Qdrant condition (a nested {must|should|must_not} filter or a field
// condition) with exactly core::filter_matches()'s semantics over the payload above. Throws
// Error(mode_unavailable) for what Qdrant cannot express exactly: order comparisons with strings
// (Qdrant's range is numeric) and numbers of magnitude >= 2^53 (Qdrant compares numbers as
// doubles, Quarry compares integers exactly); Error(invalid_argument) for order comparisons with
// booleans or null. An empty filter gives null.
nlohmann::json translate_filter(const core::Filter& filter);

// The condition every request of a KB carries: {"key": "quarry_kb", "match": {"value": kb}}.
nlohmann::json kb_condition(const std::string& kb);

// Seams for tests: a fake HTTP client and a retry sleeper. Empty members get the real ones.
struct QdrantDeps {
  std::shared_ptr<net::HttpClient> http;
  net::RetryPolicy::Sleeper sleeper;
};

std::unique_ptr<VectorStore> make_qdrant_store(const nlohmann::json& settings,
                                               const StoreContext& ctx, QdrantDeps deps = {});

}  // namespace quarry::store::qdrant
