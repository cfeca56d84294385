// The store registry and the port's defaults: the availability probe and upsert_many.
#include <unordered_set>

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

void check_upsert_batch(const std::string& store, const Scope& scope,
                        const std::vector<DocumentVectors>& docs, bool vectors_optional) {
  check_upsert_batch(store, scope, pointers_to(docs), vectors_optional);
}

void check_upsert_batch(const std::string& store, const Scope& scope,
                        const std::vector<const DocumentVectors*>& docs, bool vectors_optional) {
  std::unordered_set<std::string> ids;
  for (const auto* p : docs) {
    const DocumentVectors& d = *p;
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

std::vector<UpsertResult> VectorStore::upsert_many(const Scope& scope,
                                                   const std::vector<DocumentVectors>& docs,
                                                   Transaction* txn) {
  check_upsert_batch(id(), scope, docs, capabilities().embeds_on_write);
  std::vector<UpsertResult> out;
  out.reserve(docs.size());
  for (const auto& d : docs) out.push_back(upsert(scope, d, txn));
  return out;
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
