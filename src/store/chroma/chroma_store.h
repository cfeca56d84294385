// The `chroma` vector store (SPEC §6): a real Chroma server spoken to over its HTTP API v2
// through src/net/ (SSRF guard, retries). Settings and trade-offs: docs/stores.md ("chroma").
//
// Layout on the server: one collection per (KB, revision), cosine space, named
// deterministically from both (collection_name()); the collection's metadata records the KB,
// the revision and the dimensions, so a KB's collections can be found again and a caller with
// other dimensions is refused before Chroma sees a vector. Chunk ids are "<doc_id>#<index>",
// deterministic, so a re-ingest overwrites instead of appending.
//
// Record metadata: Chroma keeps scalars only (string, int, float, bool), so the document's
// metadata is flattened (flatten_metadata()) into dotted keys the filter language can reach
// ("info.team"), plus marker keys for what Chroma cannot store or test directly: presence
// ($exists) and null. Quarry's own keys are prefixed "quarry:"; a filter field can never
// contain ':', so user metadata cannot collide with them.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/filter.h"
#include "net/http_client.h"
#include "net/retry.h"
#include "store/settings_reader.h"
#include "store/vector_store.h"

namespace quarry::store::chroma {

// Reserved record metadata keys.
inline constexpr const char* kKbKey = "quarry:kb";
inline constexpr const char* kDocKey = "quarry:doc_id";
inline constexpr const char* kIndexKey = "quarry:chunk_index";
inline constexpr const char* kChunkIdKey = "quarry:chunk_id";
// 16 hex digits of sha256 over the vector's float32 bytes: an identical re-upsert is detected
// without reading vectors back (Chroma returns them rounded to about 8 digits, not bit-exact).
inline constexpr const char* kVectorHashKey = "quarry:vector_sha";
inline constexpr const char* kHasPrefix = "quarry:has:";    // + path: true when the path exists
inline constexpr const char* kNullPrefix = "quarry:null:";  // + path: true when it is null
// Reserved collection metadata keys.
inline constexpr const char* kRevisionKey = "quarry:revision";
inline constexpr const char* kDimensionsKey = "quarry:dimensions";

// url is the server's base URL, without /api/v2; api_key_secret names the secret sent as
// x-chroma-token.
struct ChromaSettings : RemoteSettings {
  ChromaSettings() { url = "http://127.0.0.1:8000"; }
  std::string tenant = "default_tenant";
  std::string database = "default_database";
  bool create_database = false;  // create `database` in `tenant` when it is missing
  int batch_size = 0;            // records per write; 0: the server's max_batch_size
  int ef_search = 100;           // HNSW search breadth of collections this store creates
  int ef_construction = 100;
  int max_neighbors = 16;
};

// Throws Error(invalid_argument) naming the offending key (unknown keys included).
ChromaSettings parse_chroma_settings(const nlohmann::json& settings);
// The keys parse_chroma_settings() reads, with ChromaSettings' defaults.
PluginSchema chroma_store_schema();

// "quarry-<slug of kb>-<12 hex of sha256(kb)>-<12 hex of sha256(kb, revision)>": at most 53
// characters of [a-z0-9-], starting and ending with an alphanumeric (Chroma's name rules).
std::string collection_name(const std::string& kb, const std::string& revision);

// "<doc_id>#<chunk_index>": the last '#' separates, so any doc_id is unambiguous.
std::string record_id(const std::string& doc_id, int chunk_index);

// The document metadata as Chroma record metadata (user part only; see the header comment):
// every path reachable by a filter field (segments of [A-Za-z0-9_-], joined by '.', at most 128
// characters) gets kHasPrefix+path; scalar leaves are stored under the path itself, null leaves
// as kNullPrefix+path. Arrays, and keys no filter can name, keep only their presence marker (or
// nothing, for unreachable keys): no filter operator can match their value anyway.
nlohmann::json flatten_metadata(const nlohmann::json& metadata);

// The filter as a Chroma `where` clause with exactly filter_matches()'s semantics over
// flatten_metadata()'s output. Throws Error(mode_unavailable) for what Chroma cannot express
// (an order comparison with a string: Chroma compares only numbers by order). An empty filter
// gives an empty object (no `where`).
nlohmann::json translate_filter(const core::Filter& filter);

// Seams for tests: a fake HTTP client and a retry sleeper. Empty members get the real ones.
struct ChromaDeps {
  std::shared_ptr<net::HttpClient> http;
  net::RetryPolicy::Sleeper sleeper;
};

std::unique_ptr<VectorStore> make_chroma_store(const nlohmann::json& settings,
                                               const StoreContext& ctx, ChromaDeps deps = {});

}  // namespace quarry::store::chroma
