// The store registry and the port's default availability probe.
#include "quarry/error.h"
#include "store/chroma/chroma_store.h"
#include "store/pgvector/pgvector_store.h"
#include "store/qdrant/qdrant_store.h"
#include "store/vector_store.h"

namespace quarry::store {

bool VectorStore::is_available() const {
  try {
    Query probe;
    probe.top_k = 0;
    query(Scope{"quarry-probe", "probe", 0}, probe);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

StoreRegistry& StoreRegistry::builtin() {
  static StoreRegistry* registry = [] {
    auto* r = new StoreRegistry();
    r->add("embedded", [](const nlohmann::json& settings, const StoreContext& ctx) {
      return make_embedded_store(settings, ctx);
    });
    r->add("chroma", [](const nlohmann::json& settings, const StoreContext& ctx) {
      return chroma::make_chroma_store(settings, ctx);
    });
    r->add("qdrant", [](const nlohmann::json& settings, const StoreContext& ctx) {
      return qdrant::make_qdrant_store(settings, ctx);
    });
    // Configure time: a database without the `vector` extension is refused here, by name,
    // before anything is embedded (pgvector_store.h).
    r->add("pgvector", [](const nlohmann::json& settings, const StoreContext& ctx) {
      auto store = pgvector::make_pgvector_store(settings, ctx);
      store->check();
      return std::unique_ptr<VectorStore>(std::move(store));
    });
    r->add("memory", [](const nlohmann::json& settings, const StoreContext&) {
      if (settings.is_object() && !settings.empty())
        throw Error(Code::invalid_argument,
                    "unknown memory store setting: " + settings.begin().key(),
                    {{"key", settings.begin().key()}});
      return make_memory_store();
    });
    return r;
  }();
  return *registry;
}

void StoreRegistry::add(const std::string& id, StoreFactory f) {
  if (id.empty()) throw Error(Code::invalid_argument, "a vector store needs an id");
  if (!f) throw Error(Code::invalid_argument, "vector store " + id + " has no factory");
  if (!factories_.emplace(id, std::move(f)).second)
    throw Error(Code::invalid_argument, "vector store " + id + " is already registered",
                {{"store", id}});
}

std::vector<std::string> StoreRegistry::ids() const {
  std::vector<std::string> out;
  for (const auto& [id, f] : factories_) out.push_back(id);
  return out;
}

std::unique_ptr<VectorStore> StoreRegistry::create(const std::string& id,
                                                   const nlohmann::json& settings,
                                                   const StoreContext& ctx) const {
  auto it = factories_.find(id);
  if (it == factories_.end())
    throw Error(Code::not_found, "no vector store named " + id, {{"store", id}});
  return it->second(settings, ctx);
}

}  // namespace quarry::store
