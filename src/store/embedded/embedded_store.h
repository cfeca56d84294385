// The embedded store's factory lives in vector_store.h (make_embedded_store); this header adds
// what tests and benchmarks need to look inside it.
#pragma once

#include "store/embedded/scope_index.h"
#include "store/vector_store.h"

namespace quarry::store::embedded {

// Parses the store settings json: {"hnsw_threshold", "connectivity", "expansion_add",
// "expansion_search", "quantization": "f32|f16|i8", "threads"}. quantization is the precision
// of the index's re-scoring copy (i8: none, distances from the walk's i8 codes). Unknown keys
// and bad values throw Error(invalid_argument) naming the key.
Settings parse_settings(const nlohmann::json& settings);

// The state of a scope's in-memory view after the last query; nullopt for another store kind.
std::optional<ScopeStats> scope_stats(VectorStore& store, const Scope& scope);

// <data_dir>/vectors/<kb>.<revision>.usearch (names made file-system safe).
std::string index_path(const std::string& data_dir, const std::string& kb,
                       const std::string& revision);

}  // namespace quarry::store::embedded
