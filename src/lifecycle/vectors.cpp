#include "lifecycle/vectors.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/kb_config.h"
#include "core/secret_store.h"
#include "embed/provider.h"
#include "quarry/error.h"

using nlohmann::json;

namespace quarry::lifecycle {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

embed::ProviderContext provider_context(const std::string& data_dir) {
  embed::ProviderContext c;
  c.data_dir = data_dir;
  c.models_dir = env_or("QUARRY_MODELS_DIR", "");
  c.secret = core::secret_lookup(data_dir);  // the encrypted secret store, then the environment
  return c;
}

// A KB with no embedder (and no operator pin) never wrote vectors: its deletes need not open a
// store at all.
bool may_have_vectors(const KbConfig& config) {
  return !config.embedder.provider.empty() || std::getenv("QUARRY_EMBEDDING_PROVIDER") != nullptr;
}

}  // namespace

Vectors::Vectors(std::string data_dir, catalog::Catalog& cat)
    : data_dir_(std::move(data_dir)), cat_(cat) {}
Vectors::~Vectors() = default;

store::VectorStore& Vectors::store_for(const KbConfig& config) {
  // Operator pin first (SPEC §6): a hard pin, no fallback.
  const std::string id = env_or("QUARRY_VECTOR_STORE", config.store.id);
  const std::string key = id + "|" + config.store.settings_json;
  auto it = stores_.find(key);
  if (it != stores_.end()) return *it->second;
  const auto& reg = store::StoreRegistry::builtin();
  if (!reg.has(id))
    throw Error(Code::invalid_argument, "unknown vector store '" + id + "'",
                {{"field", "store.id"}});
  store::StoreContext ctx;
  ctx.data_dir = data_dir_;
  ctx.secret = provider_context(data_dir_).secret;
  auto s = reg.create(id, json::parse(config.store.settings_json), ctx);
  return *stores_.emplace(key, std::move(s)).first->second;
}

KbVectors& Vectors::for_kb(const std::string& kb, const KbConfig& config) {
  const std::string key = kb + "|" + core::kb_config_to_json(config).dump() + "|" +
                          env_or("QUARRY_EMBEDDING_PROVIDER", "") + "|" +
                          env_or("QUARRY_VECTOR_STORE", "");
  auto it = kbs_.find(key);
  if (it != kbs_.end()) return *it->second;
  auto v = std::make_unique<KbVectors>();
  auto sel = embed::select_provider(embed::ProviderRegistry::builtin(), config.embedder.provider,
                                    json::parse(config.embedder.settings_json), "",
                                    provider_context(data_dir_));
  v->provider = std::shared_ptr<embed::EmbeddingProvider>(std::move(sel.provider));
  if (!v->provider) {
    v->unavailable = sel.reason.empty() ? "no embedding provider is configured" : sel.reason;
  } else {
    auto a = v->provider->is_available();
    if (!a.ok) v->unavailable = a.reason;
    const std::string mode = config.store.embedding_mode.empty()
                                 ? env_or("QUARRY_EMBEDDING_MODE", "auto")
                                 : config.store.embedding_mode;
    v->store = &store_for(config);
    if (mode == "plugin" && !v->store->capabilities().embeds_on_write)
      throw Error(Code::invalid_argument,
                  "embedding mode 'plugin' needs a store that embeds on write; '" + v->store->id() +
                      "' does not (use platform or auto)",
                  {{"field", "store.embedding_mode"}});
    v->scope.kb = kb;
    v->scope.dimensions = v->provider->dimensions();
    v->scope.revision = core::revision(config, v->provider->identity());
  }
  return *kbs_.emplace(key, std::move(v)).first->second;
}

void Vectors::index_document(const std::string& kb, const KbConfig& config,
                             const std::string& doc_id) {
  KbVectors& v = for_kb(kb, config);
  if (!v.provider) return;  // a KB without an embedder has nothing to do
  if (!v.unavailable.empty())
    throw Error(Code::engine_unavailable, "cannot embed: " + v.unavailable);
  auto doc = cat_.find_document(kb, doc_id);
  if (!doc) return;  // deleted meanwhile
  auto chunks = cat_.chunks_of(kb, doc_id);
  std::vector<std::string> texts;
  texts.reserve(chunks.size());
  for (const auto& c : chunks) texts.push_back(c.text);
  auto vecs = v.provider->embed_documents(texts);
  if (vecs.size() != chunks.size())
    throw Error(Code::upstream_error, "embedder '" + v.provider->id() + "' returned " +
                                          std::to_string(vecs.size()) + " vectors for " +
                                          std::to_string(chunks.size()) + " chunks");
  store::DocumentVectors dv;
  dv.doc_id = doc_id;
  dv.metadata = json::parse(doc->metadata_json, nullptr, false);
  if (dv.metadata.is_discarded() || !dv.metadata.is_object()) dv.metadata = json::object();
  for (std::size_t i = 0; i < chunks.size(); ++i)
    dv.chunks.push_back({chunks[i].index, chunks[i].chunk_id, std::move(vecs[i]), ""});
  v.store->upsert(v.scope, dv);
}

bool Vectors::has_document(const std::string& kb, const KbConfig& config,
                           const std::string& doc_id) {
  KbVectors& v = for_kb(kb, config);
  return v.provider && v.store && v.store->has(v.scope, doc_id);
}

std::string Vectors::kb_status(const std::string& kb, const KbConfig& config, std::int64_t chunks) {
  KbVectors& v = for_kb(kb, config);
  if (!v.provider || !v.store || chunks == 0) return "not_built";
  return v.store->count(v.scope) >= chunks ? "ready" : "not_built";
}

void Vectors::delete_document(const std::string& kb, const KbConfig& config,
                              const std::string& doc_id) {
  if (!may_have_vectors(config)) return;
  store_for(config).delete_document(kb, doc_id);
}

void Vectors::delete_kb(const std::string& kb, const KbConfig& config) {
  if (!may_have_vectors(config)) return;
  store_for(config).delete_kb(kb);
}

void Vectors::drop_other_revisions(const std::string& kb, const KbConfig& config) {
  KbVectors& v = for_kb(kb, config);
  if (v.store) v.store->delete_other_revisions(kb, v.scope.revision);
}

}  // namespace quarry::lifecycle
