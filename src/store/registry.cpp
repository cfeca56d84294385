// The store registry, the public registration call (quarry/plugin.h) and the port's defaults:
// the availability probe, the batch checks and upsert_many.
#include <unordered_set>

#include "core/plugin_version.h"
#include "quarry/error.h"
#include "quarry/plugin.h"
#include "store/chroma/chroma_store.h"
#include "store/pgvector/pgvector_store.h"
#include "store/qdrant/qdrant_store.h"
#include "store/vector_store.h"

namespace quarry::store {

nlohmann::json metadata_of(const DocumentVectors& doc) {
  if (doc.metadata_json.empty()) return nlohmann::json::object();
  auto md = nlohmann::json::parse(doc.metadata_json, nullptr, false);
  if (md.is_discarded() || !md.is_object())
    throw Error(Code::invalid_argument,
                "the metadata of document " + doc.doc_id +
                    " is not the JSON text of an object; give {} for none",
                {{"field", "metadata"}, {"doc_id", doc.doc_id}});
  return md;
}

void check_upsert_batch(const std::string& store, const Scope& scope,
                        const std::vector<const DocumentVectors*>& docs, bool vectors_optional) {
  std::unordered_set<std::string> ids;
  for (const auto* p : docs) {
    const DocumentVectors& d = *p;
    metadata_of(d);  // refused before anything of the call is written
    if (!ids.insert(d.doc_id).second)
      throw Error(Code::invalid_argument,
                  "document " + d.doc_id +
                      " appears twice in one upsert_many call; send one "
                      "entry per document",
                  {{"store", store}, {"doc_id", d.doc_id}});
    std::unordered_set<int> indexes;
    for (const auto& c : d.chunks) {
      if (c.vector.empty() && !vectors_optional)
        throw Error(Code::mode_unavailable,
                    "the " + store + " store does not embed text: chunk " +
                        std::to_string(c.chunk_index) + " of document " + d.doc_id +
                        " has no vector (use the platform embedding mode)",
                    {{"store", store}});
      if (!c.vector.empty() && scope.dimensions > 0 &&
          c.vector.size() != static_cast<std::size_t>(scope.dimensions))
        throw Error(Code::dimension_mismatch,
                    "a vector of document " + d.doc_id + " has " + std::to_string(c.vector.size()) +
                        " dimensions but KB " + scope.kb + " revision " + scope.revision +
                        " holds " + std::to_string(scope.dimensions) +
                        "-dimension vectors; re-embed with the revision's embedder",
                    {{"store", store},
                     {"expected", std::to_string(scope.dimensions)},
                     {"actual", std::to_string(c.vector.size())}});
      if (!indexes.insert(c.chunk_index).second)
        throw Error(Code::invalid_argument,
                    "chunk_index " + std::to_string(c.chunk_index) + " appears twice in document " +
                        d.doc_id,
                    {{"store", store}, {"doc_id", d.doc_id}});
    }
  }
}

namespace {

StoreRegistry& registry() {
  static StoreRegistry* reg = new StoreRegistry();  // never destroyed: see builtin()
  return *reg;
}

// The built-ins register through the public call, like any application's store; the flag lets
// those calls through while builtin() is still filling the registry on this thread.
thread_local bool registering_builtins = false;

void register_builtins() {
  registering_builtins = true;
  struct Reset {
    ~Reset() { registering_builtins = false; }
  } reset;
  // The built-in factories read the settings object as JSON, so their validation and messages
  // are the ones docs/stores.md documents.
  register_store(
      "embedded",
      [](const Settings& settings, const StoreContext& ctx) {
        return make_embedded_store(core::settings_json(settings), ctx);
      },
      embedded_store_schema());
  register_store(
      "chroma",
      [](const Settings& settings, const StoreContext& ctx) {
        return chroma::make_chroma_store(core::settings_json(settings), ctx);
      },
      chroma::chroma_store_schema());
  register_store(
      "qdrant",
      [](const Settings& settings, const StoreContext& ctx) {
        return qdrant::make_qdrant_store(core::settings_json(settings), ctx);
      },
      qdrant::qdrant_store_schema());
  // Configure time: a database without the `vector` extension is refused here, by name,
  // before anything is embedded (pgvector_store.h).
  register_store(
      "pgvector",
      [](const Settings& settings, const StoreContext& ctx) {
        auto store = pgvector::make_pgvector_store(core::settings_json(settings), ctx);
        store->check();
        return std::unique_ptr<VectorStore>(std::move(store));
      },
      pgvector::pgvector_store_schema());
  register_store(
      "memory",
      [](const Settings& settings, const StoreContext&) {
        if (!settings.empty())
          throw Error(Code::invalid_argument, "unknown memory store setting: " + settings.keys()[0],
                      {{"key", settings.keys()[0]}});
        return make_memory_store();
      },
      memory_store_schema());
}

}  // namespace

StoreRegistry& StoreRegistry::builtin() {
  // Filled once, on first use (leaked on purpose: stores may outlive static destruction).
  static std::once_flag once;
  if (!registering_builtins) std::call_once(once, register_builtins);
  return registry();
}

void StoreRegistry::add(const std::string& id, StoreFactory f, std::optional<PluginSchema> schema) {
  if (id.empty()) throw Error(Code::invalid_argument, "a vector store needs an id");
  if (!f) throw Error(Code::invalid_argument, "vector store " + id + " has no factory");
  std::lock_guard lock(mu_);
  if (!factories_.emplace(id, std::move(f)).second)
    throw Error(Code::invalid_argument, "vector store " + id + " is already registered",
                {{"store", id}});
  schemas_[id] = std::move(schema);
}

std::vector<RegisteredPlugin> StoreRegistry::described() const {
  std::lock_guard lock(mu_);
  return core::described_plugins(factories_, schemas_);
}

bool StoreRegistry::has(const std::string& id) const {
  std::lock_guard lock(mu_);
  return factories_.count(id) > 0;
}

std::vector<std::string> StoreRegistry::ids() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [id, f] : factories_) out.push_back(id);
  return out;
}

std::unique_ptr<VectorStore> StoreRegistry::create(const std::string& id, const Settings& settings,
                                                   const StoreContext& ctx) const {
  StoreFactory factory;
  {
    std::lock_guard lock(mu_);
    if (auto it = factories_.find(id); it != factories_.end()) factory = it->second;
  }
  if (!factory) throw Error(Code::not_found, "no vector store named " + id, {{"store", id}});
  return factory(settings, ctx);
}

std::unique_ptr<VectorStore> StoreRegistry::create(const std::string& id,
                                                   const nlohmann::json& settings,
                                                   const StoreContext& ctx) const {
  return create(id, core::settings_from_json(settings, id + " store settings"), ctx);
}

}  // namespace quarry::store

namespace quarry {

bool VectorStore::is_available() const {
  try {
    VectorQuery probe;
    probe.top_k = 0;
    query(StoreScope{"quarry-probe", "probe", 0}, probe);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<UpsertResult> VectorStore::upsert_many(const StoreScope& scope,
                                                   const std::vector<DocumentVectors>& docs,
                                                   StoreTransaction* txn) {
  check_upsert_batch(id(), scope, docs, capabilities().embeds_on_write);
  std::vector<UpsertResult> out;
  out.reserve(docs.size());
  for (const auto& d : docs) out.push_back(upsert(scope, d, txn));
  return out;
}

void check_upsert_batch(const std::string& store, const StoreScope& scope,
                        const std::vector<DocumentVectors>& docs, bool vectors_optional) {
  store::check_upsert_batch(store, scope, store::pointers_to(docs), vectors_optional);
}

void register_store(const std::string& id, StoreFactory factory, int api_version) {
  core::check_plugin_api_version("vector store", "store", id, api_version);
  store::StoreRegistry::builtin().add(id, std::move(factory));
}

void register_store(const std::string& id, StoreFactory factory, PluginSchema schema,
                    int api_version) {
  core::check_plugin_api_version("vector store", "store", id, api_version);
  store::StoreRegistry::builtin().add(id, std::move(factory), std::move(schema));
}

std::vector<std::string> registered_stores() {
  return store::StoreRegistry::builtin().ids();
}

std::vector<RegisteredPlugin> described_stores() {
  return store::StoreRegistry::builtin().described();
}

}  // namespace quarry
