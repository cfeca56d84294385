#include "lifecycle/vectors.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/kb_config.h"
#include "core/util.h"
#include "embed/provider.h"
#include "quarry/error.h"

using nlohmann::json;

namespace quarry::lifecycle {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

embed::ProviderContext provider_context(const std::string& data_dir, const SecretLookup& secret) {
  embed::ProviderContext c;
  c.data_dir = data_dir;
  c.models_dir = env_or("QUARRY_MODELS_DIR", "");
  c.secret = secret;  // the encrypted secret store, then the environment
  return c;
}

// A KB with no embedder (and no operator pin) never wrote vectors: its deletes need not open a
// store at all.
bool may_have_vectors(const KbConfig& config) {
  return !config.embedder.provider.empty() || std::getenv("QUARRY_EMBEDDING_PROVIDER") != nullptr;
}

// The chunking revision of `config` with `v`'s tokenizer (revisions.config_revision).
std::string chunking_revision(const KbVectors& v, const KbConfig& config) {
  return core::config_revision(config, v.tokenizer_key);
}

KbConfig parse_snapshot(const std::string& text) {
  return core::kb_config_from_json(json::parse(text));
}

// failed > building > not_built > stale > ready; an empty scope is not_built.
std::string aggregate(const catalog::VectorCounts& c, bool building) {
  if (c.documents == 0) return "not_built";
  if (c.failed > 0) return "failed";
  const std::int64_t not_built = c.pending() - c.stale;
  if (building && c.pending() > 0) return "building";
  if (not_built > 0) return "not_built";
  if (c.stale > 0) return "stale";
  return "ready";
}

}  // namespace

Vectors::Vectors(std::string data_dir, catalog::Catalog& cat, SecretLookup secret)
    : data_dir_(std::move(data_dir)),
      cat_(cat),
      secret_(std::move(secret)),
      approx_(chunk::make_approx_tokenizer(false)),
      approx_words_(chunk::make_approx_tokenizer(true)) {}
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
  ctx.secret = secret_;
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
  // One provider per embedder setting, shared by every config that names it: a serving
  // snapshot and the current config often differ in chunking only, and a local model's
  // weights should be loaded once.
  const std::string provider_key = config.embedder.provider + "|" + config.embedder.settings_json +
                                   "|" + env_or("QUARRY_EMBEDDING_PROVIDER", "");
  if (auto p = providers_.find(provider_key); p != providers_.end()) {
    v->provider = p->second;
  } else {
    auto sel = embed::select_provider(embed::ProviderRegistry::builtin(), config.embedder.provider,
                                      json::parse(config.embedder.settings_json), "",
                                      provider_context(data_dir_, secret_));
    v->provider = std::shared_ptr<embed::EmbeddingProvider>(std::move(sel.provider));
    if (v->provider)
      providers_.emplace(provider_key, v->provider);
    else
      v->unavailable = sel.reason.empty() ? "no embedding provider is configured" : sel.reason;
    if (!v->unavailable.empty()) v->unavailable_code = Code::engine_unavailable;
  }
  if (v->provider) {
    auto a = v->provider->is_available();
    if (!a.ok) {
      v->unavailable = a.reason;
      v->unavailable_code = Code::engine_unavailable;
      // The KB's own endpoint refused by the SSRF guard (a KB made before that was checked at
      // configuration time): say which address and which setting, under its own code.
      if (env_or("QUARRY_EMBEDDING_PROVIDER", "").empty())
        if (auto refused = embed::endpoint_refusal(
                embed::parse_spec(config.embedder.provider,
                                  json::parse(config.embedder.settings_json)),
                "embedder.settings")) {
          v->unavailable = refused->message();
          v->unavailable_code = Code::blocked_address;
        }
    }
    const std::string mode = config.store.embedding_mode.empty()
                                 ? env_or("QUARRY_EMBEDDING_MODE", "auto")
                                 : config.store.embedding_mode;
    v->store = &store_for(config);
    if (mode == "plugin" && !v->store->capabilities().embeds_on_write)
      throw Error(Code::invalid_argument,
                  "embedding mode 'plugin' needs a store that embeds on write; '" + v->store->id() +
                      "' does not (use platform or auto)",
                  {{"field", "store.embedding_mode"}});
    v->model = v->provider->identity();
    auto tokens = v->provider->model_tokenizer();
    v->tokenizer_key = embed::chunking_key(tokens);
    v->tokenizer = std::move(tokens.tokenizer);
    v->token_limit = v->tokenizer ? tokens.max_tokens : 0;
    v->scope.kb = kb;
    v->scope.dimensions = v->provider->dimensions();
    // Vectors of chunks cut another way are another revision (a bert KB made before chunks were
    // counted in its model's tokens gets rebuilt, blue-green).
    v->scope.revision = core::revision(config, v->model, v->tokenizer_key);
  }
  return *kbs_.emplace(key, std::move(v)).first->second;
}

KbVectors& Vectors::serving(const catalog::KbRef& kb, const KbConfig& config) {
  auto s = cat_.revisions().in_state(kb, "serving");
  if (!s) return for_kb(kb.name, config);
  KbVectors& current = for_kb(kb.name, config);
  if (current.provider && current.scope.revision == s->revision) return current;
  return for_kb(kb.name, parse_snapshot(s->config_json));
}

catalog::RevisionRow Vectors::row_for(const KbVectors& v, const KbConfig& config,
                                      const std::string& state) const {
  catalog::RevisionRow r;
  r.revision = v.scope.revision;
  r.config_revision = chunking_revision(v, config);
  r.config_json = core::kb_config_to_json(config).dump();
  r.model = v.model;
  r.dimensions = v.scope.dimensions;
  r.store_id = v.store ? v.store->id() : "";
  r.state = state;
  return r;
}

void Vectors::drop_revision(const catalog::KbRef& kb, const catalog::RevisionRow& r,
                            const std::string& keep) {
  // The port deletes "every revision but one": callers keep at most two revisions, so the one
  // kept is the other one.
  KbVectors& v = for_kb(kb.name, parse_snapshot(r.config_json));
  if (v.store) v.store->delete_other_revisions(kb.name, keep);
  cat_.revisions().remove(kb, r.revision);
}

RevisionChange Vectors::preview(const catalog::KbRef& kb, const KbConfig& config, bool immediate) {
  KbVectors& t = for_kb(kb.name, config);
  auto rows = cat_.revisions().list(kb);
  RevisionChange out;
  if (!t.provider) {
    out.kind = rows.empty() ? "none" : "drop";
    return out;
  }
  out.target_revision = t.scope.revision;
  out.target_config_revision = chunking_revision(t, config);
  std::optional<catalog::RevisionRow> serving, other;
  std::size_t others = 0;
  for (auto& r : rows) {
    if (r.state == "serving" && !serving) {
      serving = r;
    } else {
      ++others;
      other = r;
    }
  }
  if (others != 1) other.reset();  // plan() drops all but the serving one
  if (!serving) {
    out.kind = "first";
    return out;
  }
  out.serving_revision = serving->revision;
  out.serving_config_revision = serving->config_revision;
  if (serving->revision == out.target_revision) {
    out.kind = "unchanged";
    return out;
  }
  const bool serving_has_vectors = cat_.revisions().counts(kb, serving->revision, "").ready > 0;
  const bool store_changed = t.store && serving->store_id != t.store->id();
  if (immediate || !serving_has_vectors || store_changed)
    out.kind = "replace";
  else if (other && other->revision == out.target_revision &&
           cat_.revisions().counts(kb, out.target_revision, "").pending() == 0)
    out.kind = "switch_back";  // switching back to a revision that is still complete
  else
    out.kind = "blue_green";
  return out;
}

RevisionPlan Vectors::plan(const catalog::KbRef& kb, const KbConfig& config, bool immediate,
                           bool collect_previous) {
  // One decision, shared with preview() (a dry run of a KB change), then its steps.
  const RevisionChange change = preview(kb, config, immediate);
  KbVectors& t = for_kb(kb.name, config);
  auto rows = cat_.revisions().list(kb);
  RevisionPlan out;
  if (change.kind == "none") return out;
  if (change.kind == "drop") {
    // The embedder was removed: no vectors serve any more.
    for (const auto& r : rows) {
      KbVectors& v = for_kb(kb.name, parse_snapshot(r.config_json));
      if (v.store) v.store->delete_kb(kb.name);
      cat_.revisions().remove(kb, r.revision);
    }
    return out;
  }
  const std::string& target = change.target_revision;
  std::optional<catalog::RevisionRow> serving, other;
  std::vector<catalog::RevisionRow> others;
  for (auto& r : rows) {
    if (r.state == "serving" && !serving)
      serving = r;
    else
      others.push_back(r);
  }
  if (others.size() == 1) {
    other = others.front();
  } else {
    // Never more than two (a crash between steps could leave a third): keep the serving one.
    for (const auto& r : others) drop_revision(kb, r, serving ? serving->revision : target);
  }
  if (change.kind == "first") {
    // First embedder (or a data dir from before revisions were tracked): serve the target.
    if (other && other->revision != target) {
      drop_revision(kb, *other, target);
      other.reset();
    }
    cat_.revisions().put(kb, row_for(t, config, "serving"));
    out.serving = cat_.revisions().in_state(kb, "serving");
    return out;
  }
  if (change.kind == "unchanged") {
    if (other && other->state == "building") {  // the config went back: cancel the build
      drop_revision(kb, *other, target);
      other.reset();
    }
    if (other && collect_previous) {
      drop_revision(kb, *other, target);
      other.reset();
    }
    // Settings outside the revision (timeouts, keys...) follow the config.
    auto row = row_for(t, config, "serving");
    row.created_at = serving->created_at;
    row.completed_at = serving->completed_at;
    if (row.config_json != serving->config_json) cat_.revisions().put(kb, row);
    out.serving = cat_.revisions().in_state(kb, "serving");
    if (other) out.previous = other;
    return out;
  }
  // The revision changed. Vectors of the serving revision keep answering while the new one
  // builds, unless there are none to keep, the store changed, or the caller wants it now.
  if (change.kind == "replace") {
    const bool store_changed = t.store && serving->store_id != t.store->id();
    if (store_changed) {
      KbVectors& old = for_kb(kb.name, parse_snapshot(serving->config_json));
      if (old.store) old.store->delete_kb(kb.name);
      cat_.revisions().remove(kb, serving->revision);
      if (other) cat_.revisions().remove(kb, other->revision);
      other.reset();
    } else {
      drop_revision(kb, *serving, target);
      if (other && other->revision != target) drop_revision(kb, *other, target);
    }
    auto row = row_for(t, config, "serving");
    if (other && other->revision == target) row.created_at = other->created_at;
    cat_.revisions().put(kb, row);
    out.serving = cat_.revisions().in_state(kb, "serving");
    return out;
  }
  if (other && other->revision != target) {
    drop_revision(kb, *other, serving->revision);  // a third space never exists
    other.reset();
  }
  auto row = row_for(t, config, "building");
  if (other) row.created_at = other->created_at;  // switching back: its vectors still count
  cat_.revisions().put(kb, row);
  if (change.kind == "switch_back") {
    // Switching back to a revision that is still complete: instant, nothing to build.
    cut_over(kb, *cat_.revisions().in_state(kb, "building"));
    out.serving = cat_.revisions().in_state(kb, "serving");
    out.previous = cat_.revisions().in_state(kb, "previous");
    return out;
  }
  out.serving = serving;
  out.building = cat_.revisions().in_state(kb, "building");
  return out;
}

void Vectors::cut_over(const catalog::KbRef& kb, const catalog::RevisionRow& building) {
  auto serving = cat_.revisions().in_state(kb, "serving");
  const bool rechunked = serving && serving->config_revision != building.config_revision;
  // One transaction: the staged chunks become the documents' chunks as the revision flips.
  cat_.revisions().cut_over(kb, building.revision, rechunked ? building.config_revision : "");
  // The old revision's vectors point at chunks that no longer exist: nothing to switch back to.
  if (rechunked) drop_revision(kb, *serving, building.revision);
}

chunk::Chunking Vectors::chunking(const std::string& kb, const KbConfig& config) {
  const KbVectors& v = for_kb(kb, config);
  chunk::Chunking c;
  c.options = chunk::within_model_limit(chunk::chunk_options(config), v.token_limit);
  c.tokenizer = v.tokenizer                          ? v.tokenizer.get()
                : config.chunking.segmenter == "icu" ? approx_words_.get()
                                                     : approx_.get();
  c.revision = chunking_revision(v, config);
  return c;
}

chunk::Chunking Vectors::write_chunking(const catalog::KbRef& kb, const KbConfig& config) {
  auto building = cat_.revisions().in_state(kb, "building");
  if (!building) return chunking(kb.name, config);
  auto serving = cat_.revisions().in_state(kb, "serving");
  if (!serving || serving->config_revision == building->config_revision)
    return chunking(kb.name, config);
  chunk::Chunking c = chunking(kb.name, parse_snapshot(serving->config_json));
  c.options.max_chunks = config.limits.max_chunks_per_document;
  return c;
}

std::string Vectors::document_status(const catalog::KbRef& kb, const KbConfig& config,
                                     const catalog::DocumentRow& doc, VectorFailure* failure) {
  KbVectors& t = for_kb(kb.name, config);
  if (!t.provider) return "not_built";
  if (in_flight_.count(doc.id)) return "building";
  auto s = cat_.revisions().in_state(kb, "serving");
  bool ready = false, stale = false;
  for (const auto& c : cat_.revisions().coordinates_of(kb, doc.id)) {
    if (c.content_sha256 != doc.content_sha256) continue;
    if (c.revision == t.scope.revision) ready = true;
    if (s && c.revision == s->revision && s->revision != t.scope.revision) stale = true;
  }
  if (ready) return "ready";
  for (const auto& f : cat_.revisions().failures(kb, t.scope.revision, 1 << 20)) {
    if (f.doc_id != doc.id) continue;
    if (failure) *failure = {f.doc_id, f.code, f.message, core::iso8601_utc(f.at)};
    return "failed";
  }
  return stale ? "stale" : "not_built";
}

std::string Vectors::kb_status(const catalog::KbRef& kb, const KbConfig& config,
                               const core::Filter& filter) {
  KbVectors& t = for_kb(kb.name, config);
  if (!t.provider) return "not_built";
  auto s = cat_.revisions().in_state(kb, "serving");
  const std::string older = s && s->revision != t.scope.revision ? s->revision : "";
  const bool building = building_kbs_.count(kb.name) > 0;
  if (!filter.empty())
    return aggregate(cat_.revisions().counts(kb, t.scope.revision, older, filter), building);
  // Unfiltered (every search without a filter): counting is linear in the KB's documents, so
  // it is cached until this connection writes, and refreshed at most once a second while
  // another process writes (a sweep there commits every page; a search here should not
  // recount the KB each time).
  auto gens = cat_.kbs().generations(kb);
  const std::int64_t local = cat_.local_changes();
  const std::string key = t.scope.revision + "|" + older;
  const auto now = std::chrono::steady_clock::now();
  auto [it, fresh] = status_cache_.try_emplace(kb.name);
  auto& c = it->second;
  if (fresh || c.key != key || c.local_changes != local ||
      (c.generations != gens && now - c.at > std::chrono::seconds(1))) {
    c.counts = cat_.revisions().counts(kb, t.scope.revision, older);
    c.generations = gens;
    c.key = key;
    c.local_changes = local;
    c.at = now;
  }
  return aggregate(c.counts, building);
}

VectorIndexInfo Vectors::kb_info(const catalog::KbRef& kb, const KbConfig& config) {
  VectorIndexInfo i;
  KbVectors& t = for_kb(kb.name, config);
  if (!t.unavailable.empty() && !config.embedder.provider.empty()) {
    i.unavailable_code = code_name(t.unavailable_code);
    i.unavailable = t.unavailable;
  }
  if (!t.provider) return i;
  for (const auto& r : cat_.revisions().list(kb)) {
    if (r.state == "serving") i.serving_revision = r.revision;
    if (r.state == "building") i.building_revision = r.revision;
    if (r.state == "previous") i.previous_revision = r.revision;
  }
  const std::string older = !i.serving_revision.empty() && i.serving_revision != t.scope.revision
                                ? i.serving_revision
                                : "";
  auto c = cat_.revisions().counts(kb, t.scope.revision, older);
  i.documents = c.documents;
  i.ready = c.ready;
  i.stale = c.stale;
  i.failed = c.failed;
  i.pending = c.pending();
  for (const auto& f : cat_.revisions().failures(kb, t.scope.revision, 100))
    i.failures.push_back({f.doc_id, f.code, f.message, core::iso8601_utc(f.at)});
  KbVectors& s = serving(kb, config);
  if (s.store) i.stored = s.store->count(s.scope);
  return i;
}

void Vectors::delete_document(const catalog::KbRef& kb, const KbConfig& config,
                              const std::string& doc_id) {
  if (may_have_vectors(config)) {
    store_for(config).delete_document(kb.name, doc_id);
    for (const auto& r : cat_.revisions().list(kb)) {  // a revision kept in another store
      KbVectors& v = for_kb(kb.name, parse_snapshot(r.config_json));
      if (v.store && v.store != &store_for(config)) v.store->delete_document(kb.name, doc_id);
    }
  }
  cat_.revisions().delete_coordinates(kb, doc_id);
}

void Vectors::delete_kb(const std::string& kb_name, const KbConfig& config) {
  if (!may_have_vectors(config)) return;
  store_for(config).delete_kb(kb_name);
}

int Vectors::collect_orphans(const catalog::KbRef& kb, const KbConfig& config) {
  auto ids = cat_.revisions().orphaned_coordinates(kb);
  for (const auto& id : ids) delete_document(kb, config, id);
  return static_cast<int>(ids.size());
}

}  // namespace quarry::lifecycle
