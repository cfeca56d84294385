// The vector-store port (quarry/vector_store.h, SPEC §6) under its internal names, with what
// only the library uses: the registry that builds stores from a KB's settings, the batch checks
// over pointers, and the built-in factories (store/embedded/, chroma/, qdrant/, pgvector/, the
// memory store).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/filter.h"
#include "core/settings_json.h"
#include "quarry/plugin.h"
#include "quarry/vector_store.h"

namespace quarry::store {

using Capabilities = quarry::StoreCapabilities;
using Scope = quarry::StoreScope;
using Query = quarry::VectorQuery;
using Transaction = quarry::StoreTransaction;
using quarry::check_upsert_batch;
using quarry::ChunkVector;
using quarry::cosine_score;
using quarry::DocumentVectors;
using quarry::StoreContext;
using quarry::StoreFactory;
using quarry::StoreHit;
using quarry::UpsertResult;
using quarry::VectorStore;

// The document's metadata as a JSON object ("" counts as {}); Error(invalid_argument) naming
// the document when its metadata_json is not the text of an object.
nlohmann::json metadata_of(const DocumentVectors& doc);

// check_upsert_batch over pointers: stores write a single upsert and a page through one path.
void check_upsert_batch(const std::string& store, const Scope& scope,
                        const std::vector<const DocumentVectors*>& docs, bool vectors_optional);
inline std::vector<const DocumentVectors*> pointers_to(const std::vector<DocumentVectors>& docs) {
  std::vector<const DocumentVectors*> out;
  out.reserve(docs.size());
  for (const auto& d : docs) out.push_back(&d);
  return out;
}

// Thread-safe: an application may register while another thread builds a store.
class StoreRegistry {
 public:
  // The process-wide registry: the built-ins (embedded, memory, chroma, qdrant, pgvector),
  // registered through quarry::register_store() on first use, and every store an application
  // registered.
  static StoreRegistry& builtin();
  // invalid_argument on empty id / duplicate
  void add(const std::string& id, StoreFactory f,
           std::optional<PluginSchema> schema = std::nullopt);
  bool has(const std::string& id) const;
  std::vector<std::string> ids() const;
  // Every store with its schema (when it registered one), sorted by id.
  std::vector<RegisteredPlugin> described() const;
  // not_found for an unknown id; the factory's errors for bad settings.
  std::unique_ptr<VectorStore> create(const std::string& id, const Settings& settings,
                                      const StoreContext& ctx) const;
  // The same with the settings as a KB config holds them (null counts as {}).
  std::unique_ptr<VectorStore> create(const std::string& id, const nlohmann::json& settings,
                                      const StoreContext& ctx) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, StoreFactory> factories_;
  std::map<std::string, std::optional<PluginSchema>> schemas_;
};

// The built-ins' descriptions (quarry::PluginSchema), each beside the code that reads its
// settings (store/embedded/, chroma/, qdrant/, pgvector/; the memory store reads none).
PluginSchema embedded_store_schema();
PluginSchema memory_store_schema();

// An in-memory store: brute force, for tests of the layers above the port (and `memory`).
std::unique_ptr<VectorStore> make_memory_store();
// The embedded default store (store/embedded/).
std::unique_ptr<VectorStore> make_embedded_store(const nlohmann::json& settings,
                                                 const StoreContext& ctx);

}  // namespace quarry::store
