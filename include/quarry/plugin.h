// Registering embedding providers and vector stores (docs/plugins.md). An application that links
// the library adds its own plugins at start-up, before it opens an Engine, as a DuckDB extension
// registers its functions:
//
//   quarry::register_store("brute", [](const quarry::Settings& s, const quarry::StoreContext&) {
//     return std::make_unique<BruteForceStore>(s);
//   });
//
// A KB then names it like a built-in ({"store": {"id": "brute", "settings": {...}}}). The
// built-ins (static, bert, hash, openai; embedded, memory, chroma, qdrant, pgvector) register
// through these same calls.
//
// The version rule: kPluginApiVersion counts incompatible changes of the plugin headers
// (quarry/plugin.h, embedding_provider.h, vector_store.h, settings.h, filter.h, tokenizer.h).
// The default argument `api_version` is evaluated where the plugin calls register_*, so it
// carries the version the plugin was compiled against; the library refuses any other version
// with quarry::Error(invalid_argument) saying to rebuild the plugin against its headers.
#pragma once

#include <string>
#include <vector>

#include "quarry/embedding_provider.h"
#include "quarry/vector_store.h"

namespace quarry {

inline constexpr int kPluginApiVersion = 1;

// Adds a provider under `id` (what a KB's `embedding.provider` names before the ':'). Throws
// quarry::Error(invalid_argument) for an empty id, a missing factory, an id already registered,
// or an api_version other than the library's kPluginApiVersion. Thread-safe.
void register_provider(const std::string& id, ProviderFactory factory,
                       int api_version = kPluginApiVersion);
// Adds a store under `id` (what a KB's `store.id` names); the same rules.
void register_store(const std::string& id, StoreFactory factory,
                    int api_version = kPluginApiVersion);

// The ids registered so far, built-ins included, sorted.
std::vector<std::string> registered_providers();
std::vector<std::string> registered_stores();

}  // namespace quarry
