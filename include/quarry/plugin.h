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
// A plugin may describe itself (a PluginSchema: one line, its settings, its known models), so
// that a client (GET /api/v1/plugins, a web page's settings form) can offer it; one registered
// without a schema is listed with its id alone.
//
// The version rule: kPluginApiVersion counts incompatible changes of the plugin headers
// (quarry/plugin.h, embedding_provider.h, vector_store.h, settings.h, filter.h, tokenizer.h).
// The default argument `api_version` is evaluated where the plugin calls register_*, so it
// carries the version the plugin was compiled against; the library refuses any other version
// with quarry::Error(invalid_argument) saying to rebuild the plugin against its headers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "quarry/embedding_provider.h"
#include "quarry/vector_store.h"

namespace quarry {

// 2: EmbeddingProvider gained query_coverage() (a new virtual: a plugin built against 1 has
// the old vtable and is refused rather than called through it).
inline constexpr int kPluginApiVersion = 2;

// One setting a plugin reads from its `settings` object.
struct PluginSetting {
  std::string name;
  // string | integer | number | boolean | secret-name (a string naming a secret of the secret
  // store, never the secret itself)
  std::string type = "string";
  bool required = false;
  std::string default_json;          // the default as JSON text ("256", "\"hnsw\""); "" = none
  std::string description;           // one line
  std::vector<std::string> allowed;  // for a string: the only values accepted; empty = any
};

// A model a provider knows by name (what follows ':' in `embedder.provider`).
struct PluginModel {
  std::string name;
  int dimensions = 0;  // 0 = not known before the model is loaded
  std::string description;
  bool is_default = false;  // what the provider uses when the spec names no model
};

// What a plugin says about itself. `settings` lists every key its factory reads (and no other);
// `models` is for providers only.
struct PluginSchema {
  std::string description;  // one line
  std::vector<PluginSetting> settings;
  std::vector<PluginModel> models;
};

// A registered plugin: its id and, when it registered one, its schema.
struct RegisteredPlugin {
  std::string id;
  std::optional<PluginSchema> schema;  // nullopt: registered without a description
};

// Adds a provider under `id` (what a KB's `embedding.provider` names before the ':'). Throws
// quarry::Error(invalid_argument) for an empty id, a missing factory, an id already registered,
// or an api_version other than the library's kPluginApiVersion. Thread-safe.
void register_provider(const std::string& id, ProviderFactory factory,
                       int api_version = kPluginApiVersion);
// Adds a store under `id` (what a KB's `store.id` names); the same rules.
void register_store(const std::string& id, StoreFactory factory,
                    int api_version = kPluginApiVersion);
// The same, with the plugin's description (its settings and, for a provider, its models).
void register_provider(const std::string& id, ProviderFactory factory, PluginSchema schema,
                       int api_version = kPluginApiVersion);
void register_store(const std::string& id, StoreFactory factory, PluginSchema schema,
                    int api_version = kPluginApiVersion);

// The ids registered so far, built-ins included, sorted.
std::vector<std::string> registered_providers();
std::vector<std::string> registered_stores();
// The same, with each plugin's schema, sorted by id.
std::vector<RegisteredPlugin> described_providers();
std::vector<RegisteredPlugin> described_stores();

}  // namespace quarry
