// The chroma store: the port's calls as Chroma HTTP API v2 requests (layout and metadata: the
// header). Every scoped call finds its collection by name (cached by id); reads of a collection
// that does not exist are empty, only upsert creates one.
//
// Counts: Chroma's delete answers nothing, so the deletes first read the ids they will remove
// (get with the same `where`), then delete exactly those ids, in batches, until none is left.
#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/util.h"
#include "quarry/error.h"
#include "store/chroma/chroma_http.h"
#include "store/chroma/chroma_store.h"
#include "store/remote_call.h"
#include "store/remote_checks.h"

namespace quarry::store::chroma {
using nlohmann::json;

namespace {

constexpr const char* kStore = "chroma";

std::string vector_hash(const std::vector<float>& v) {
  return core::sha256_hex(vector_bytes(v)).substr(0, 16);
}

struct Collection {
  std::string id;
  std::string name;
  std::string revision;
  int dimensions = 0;
};

Collection collection_of(const json& c) {
  Collection out;
  out.id = c.value("id", "");
  out.name = c.value("name", "");
  const json md = c.contains("metadata") && c["metadata"].is_object() ? c["metadata"] : json();
  if (md.is_object()) {
    if (md.contains(kRevisionKey) && md[kRevisionKey].is_string())
      out.revision = md[kRevisionKey].get<std::string>();
    if (md.contains(kDimensionsKey) && md[kDimensionsKey].is_number_integer())
      out.dimensions = md[kDimensionsKey].get<int>();
  }
  return out;
}

class ChromaStore final : public RemoteStore {
 public:
  ChromaStore(ChromaSettings s, std::string token, ChromaDeps deps)
      : RemoteStore(kStore), s_(std::move(s)), http_(s_, std::move(token), std::move(deps)) {
    db_ = "/tenants/" + path_segment(s_.tenant) + "/databases/" + path_segment(s_.database);
  }

  std::string id() const override { return "chroma"; }

  Capabilities capabilities() const override {
    Capabilities c;
    c.metadata_filter = true;  // all of §4 except order comparisons with strings (mode_unavailable)
    c.hybrid = false;
    c.namespaces = false;
    c.hard_delete = true;
    c.native_dimensions = false;
    c.embeds_on_write = false;
    c.tenancy = "collection";
    return c;
  }

  std::vector<StoreHit> query(const Scope& scope, const Query& q) const override {
    if (!check_query(kStore, scope, q)) return {};
    json where = translate_filter(q.filter);  // before any I/O: refuse what cannot be exact
    auto c = find(scope);
    if (!c) return {};
    if (c->dimensions > 0 && q.vector.size() != static_cast<std::size_t>(c->dimensions))
      dimension_error(kStore, "the query vector", q.vector.size(), c->dimensions, scope);
    json body = {{"query_embeddings", json::array({q.vector})},
                 {"n_results", q.top_k},
                 {"include", {"metadatas", "distances"}}};
    if (!where.empty()) body["where"] = std::move(where);
    Reply r = on_collection(*c, "POST", "/query", body);
    std::vector<StoreHit> hits;
    if (r.status == 404 || !r.body.is_object()) return hits;
    const json& ids = r.body["ids"];
    const json& metas = r.body["metadatas"];
    const json& dists = r.body["distances"];
    if (!ids.is_array() || ids.empty()) return hits;
    for (std::size_t i = 0; i < ids[0].size(); ++i) {
      const json& md = metas[0][i];
      StoreHit h;
      h.doc_id = md.value(kDocKey, "");
      h.chunk_index = md.value(kIndexKey, 0);
      h.chunk_id = md.value(kChunkIdKey, "");
      h.raw_score = dists[0][i].is_number() ? dists[0][i].get<double>() : 2.0;
      h.score = cosine_score(h.raw_score);
      hits.push_back(std::move(h));
    }
    best_first(hits, q.top_k);
    return hits;
  }

  int delete_document(const std::string& kb, const std::string& doc_id, Transaction*) override {
    int n = 0;
    for (const auto& c : kb_collections(kb)) n += delete_matching(c, {{kDocKey, doc_id}});
    return n;
  }

  int delete_kb(const std::string& kb, Transaction*) override {
    int n = 0;
    for (const auto& c : kb_collections(kb)) n += drop(c);
    return n;
  }

  int delete_where(const std::string& kb, const core::Filter& filter, Transaction*) override {
    require_filter(filter);
    json where = translate_filter(filter);
    int n = 0;
    for (const auto& c : kb_collections(kb)) n += delete_matching(c, where);
    return n;
  }

  int delete_other_revisions(const std::string& kb, const std::string& keep) override {
    int n = 0;
    for (const auto& c : kb_collections(kb))
      if (c.revision != keep) n += drop(c);
    return n;
  }

  bool has(const Scope& scope, const std::string& doc_id) const override {
    auto c = find(scope);
    if (!c) return false;
    json body = {{"where", {{kDocKey, doc_id}}}, {"limit", 1}, {"include", json::array()}};
    Reply r = on_collection(*c, "POST", "/get", body);
    return r.status != 404 && r.body.is_object() && r.body["ids"].is_array() &&
           !r.body["ids"].empty();
  }

  std::int64_t count(const Scope& scope) const override {
    auto c = find(scope);
    if (!c) return 0;
    Reply r = on_collection(*c, "GET", "/count", nullptr);
    return r.status == 404 || !r.body.is_number_integer() ? 0 : r.body.get<std::int64_t>();
  }

  bool is_available() const override {
    if (!http_.reachable()) return false;
    try {
      ensure_database();
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

 private:
  // --- collections -------------------------------------------------------------------------

  std::optional<Collection> find(const Scope& scope) const {
    const std::string name = collection_name(scope.kb, scope.revision);
    {
      std::lock_guard lock(mu_);
      if (auto it = cache_.find(name); it != cache_.end()) return it->second;
    }
    ensure_database();
    Reply r = http_.call("GET", db_ + "/collections/" + path_segment(name), nullptr, true);
    if (r.status == 404) return std::nullopt;
    return remember(collection_of(r.body));
  }

  Collection ensure_collection(const Scope& scope) {
    if (auto c = find(scope)) {
      if (c->dimensions != scope.dimensions)
        dimension_error(kStore, "the upsert's scope", static_cast<std::size_t>(scope.dimensions),
                        c->dimensions, scope);
      return *c;
    }
    json body = {
        {"name", collection_name(scope.kb, scope.revision)},
        {"configuration",
         {{"hnsw",
           {{"space", "cosine"},
            {"ef_search", s_.ef_search},
            {"ef_construction", s_.ef_construction},
            {"max_neighbors", s_.max_neighbors}}}}},
        {"metadata",
         {{kKbKey, scope.kb}, {kRevisionKey, scope.revision}, {kDimensionsKey, scope.dimensions}}},
        {"get_or_create", true}};
    Collection c = collection_of(http_.call("POST", db_ + "/collections", &body).body);
    if (c.dimensions != scope.dimensions)  // it existed already (a concurrent creator)
      dimension_error(kStore, "the upsert's scope", static_cast<std::size_t>(scope.dimensions),
                      c.dimensions, scope);
    return remember(std::move(c));
  }

  Collection remember(Collection c) const {
    std::lock_guard lock(mu_);
    cache_[c.name] = c;
    return c;
  }

  void forget(const std::string& name) const {
    std::lock_guard lock(mu_);
    cache_.erase(name);
  }

  // Every collection this store made for the KB (all revisions), found by its metadata.
  std::vector<Collection> kb_collections(const std::string& kb) const {
    ensure_database();
    std::vector<Collection> out;
    constexpr int kPage = 100;
    for (int offset = 0;; offset += kPage) {
      Reply r = http_.call("GET", db_ + "/collections?limit=" + std::to_string(kPage) +
                                      "&offset=" + std::to_string(offset));
      if (!r.body.is_array()) break;
      for (const auto& c : r.body) {
        const json& md = c.contains("metadata") ? c["metadata"] : json();
        if (md.is_object() && md.contains(kKbKey) && md[kKbKey] == kb)
          out.push_back(collection_of(c));
      }
      if (r.body.size() < static_cast<std::size_t>(kPage)) break;
    }
    return out;
  }

  // A call on one collection; a 404 (dropped meanwhile) forgets it and answers {404}.
  Reply on_collection(const Collection& c, const std::string& method, const std::string& op,
                      const json* body) const {
    Reply r = http_.call(method, db_ + "/collections/" + path_segment(c.id) + op, body, true);
    if (r.status == 404) forget(c.name);
    return r;
  }
  Reply on_collection(const Collection& c, const std::string& method, const std::string& op,
                      const json& body) const {
    return on_collection(c, method, op, &body);
  }

  int drop(const Collection& c) {
    Reply n = on_collection(c, "GET", "/count", nullptr);
    http_.call("DELETE", db_ + "/collections/" + path_segment(c.name), nullptr, true);
    forget(c.name);
    return n.status == 404 || !n.body.is_number_integer() ? 0 : n.body.get<int>();
  }

  // Reads the matching ids a batch at a time and deletes exactly those, until none is left.
  int delete_matching(const Collection& c, const json& where) {
    int n = 0;
    const int batch = batch_size();
    while (true) {
      json get = {{"where", where}, {"limit", batch}, {"include", json::array()}};
      Reply r = on_collection(c, "POST", "/get", get);
      if (r.status == 404 || !r.body.is_object() || !r.body["ids"].is_array()) break;
      const json& ids = r.body["ids"];
      if (ids.empty()) break;
      json del = {{"ids", ids}};
      if (on_collection(c, "POST", "/delete", del).status == 404) break;
      n += static_cast<int>(ids.size());
      if (ids.size() < static_cast<std::size_t>(batch)) break;
    }
    return n;
  }

  // --- writes --------------------------------------------------------------------------------

  std::vector<UpsertResult> write_page(const Scope& scope,
                                       const std::vector<const DocumentVectors*>& docs) override {
    return upsert_into(ensure_collection(scope), scope, docs);
  }
  void forget_collection(const Scope& scope) override {
    forget(collection_name(scope.kb, scope.revision));
  }

  // What is stored for the documents now (one paged get for all of them), then the stale
  // records' deletes and the changed records' upserts, each in batches of max_batch_size.
  std::vector<UpsertResult> upsert_into(const Collection& c, const Scope& scope,
                                        const std::vector<const DocumentVectors*>& docs) {
    const std::string at = db_ + "/collections/" + path_segment(c.id);
    const int batch = batch_size();
    std::unordered_map<std::string, json> existing;  // record id -> metadata (vector hash in it)
    json doc_ids = json::array();
    for (const auto* d : docs) doc_ids.push_back(d->doc_id);
    const json where =
        docs.size() == 1 ? json{{kDocKey, docs[0]->doc_id}} : json{{kDocKey, {{"$in", doc_ids}}}};
    for (int offset = 0;; offset += batch) {
      json get = {
          {"where", where}, {"limit", batch}, {"offset", offset}, {"include", {"metadatas"}}};
      Reply r = http_.call("POST", at + "/get", &get);
      const json& ids = r.body["ids"];
      for (std::size_t i = 0; i < ids.size(); ++i)
        existing[ids[i].get<std::string>()] = r.body["metadatas"][i];
      if (ids.size() < static_cast<std::size_t>(batch)) break;
    }

    std::vector<UpsertResult> res(docs.size());
    struct Changed {
      std::size_t doc;
      std::size_t chunk;
      json md;
    };
    std::vector<Changed> changed;
    std::set<std::string> keep;
    for (std::size_t d = 0; d < docs.size(); ++d) {
      const DocumentVectors& doc = *docs[d];
      const json user = flatten_metadata(metadata_of(doc));
      for (std::size_t i = 0; i < doc.chunks.size(); ++i) {
        const auto& ch = doc.chunks[i];
        json md = user;
        md[kKbKey] = scope.kb;
        md[kDocKey] = doc.doc_id;
        md[kIndexKey] = ch.chunk_index;
        md[kChunkIdKey] = ch.chunk_id;
        md[kVectorHashKey] = vector_hash(ch.vector);
        const std::string rid = record_id(doc.doc_id, ch.chunk_index);
        keep.insert(rid);
        auto it = existing.find(rid);
        if (it != existing.end() && it->second == md)
          ++res[d].skipped;
        else
          changed.push_back({d, i, std::move(md)});
      }
    }

    json stale = json::array();
    for (const auto& [rid, md] : existing)
      if (!keep.count(rid)) stale.push_back(rid);
    for (std::size_t from = 0; from < stale.size(); from += static_cast<std::size_t>(batch)) {
      json part = json::array();
      for (std::size_t j = from; j < std::min(stale.size(), from + batch); ++j)
        part.push_back(stale[j]);
      json del = {{"ids", std::move(part)}};
      http_.call("POST", at + "/delete", &del);
    }

    const bool b64 = base64_ok();
    for (std::size_t from = 0; from < changed.size(); from += static_cast<std::size_t>(batch)) {
      json ids = json::array(), embs = json::array(), mds = json::array();
      const std::size_t to = std::min(changed.size(), from + batch);
      for (std::size_t j = from; j < to; ++j) {
        const DocumentVectors& doc = *docs[changed[j].doc];
        const auto& ch = doc.chunks[changed[j].chunk];
        ids.push_back(record_id(doc.doc_id, ch.chunk_index));
        if (b64)
          embs.push_back(base64_floats(ch.vector));
        else
          embs.push_back(ch.vector);
        mds.push_back(std::move(changed[j].md));
      }
      json body = {{"ids", std::move(ids)}, {"embeddings", std::move(embs)}, {"metadatas", mds}};
      http_.call("POST", at + "/upsert", &body);
      for (std::size_t j = from; j < to; ++j) ++res[changed[j].doc].written;
    }
    return res;
  }

  // --- server facts, asked once ----------------------------------------------------------------

  void ensure_database() const {
    {
      std::lock_guard lock(mu_);
      if (database_checked_) return;
    }
    Reply r = http_.call("GET", db_, nullptr, true);
    if (r.status == 404) {
      if (!s_.create_database)
        throw Error(Code::not_found,
                    "Chroma at " + s_.url + " has no database '" + s_.database + "' in tenant '" +
                        s_.tenant + "'; create it, or set the chroma store's create_database: true",
                    {{"store", "chroma"}, {"url", s_.url}});
      json body = {{"name", s_.database}};
      try {
        http_.call("POST", "/tenants/" + path_segment(s_.tenant) + "/databases", &body);
      } catch (const Error& e) {  // 409: a concurrent creator won the race
        if (!has_status(e, "409")) throw;
      }
    }
    std::lock_guard lock(mu_);
    database_checked_ = true;
  }

  void preflight() const {
    {
      std::lock_guard lock(mu_);
      if (max_batch_ > 0) return;
    }
    Reply r = http_.call("GET", "/pre-flight-checks");
    int max = 1000;  // Chroma's documented floor, should an old server not say
    bool b64 = false;
    if (r.body.is_object()) {
      if (r.body.contains("max_batch_size") && r.body["max_batch_size"].is_number_integer())
        max = std::max(1, r.body["max_batch_size"].get<int>());
      b64 = r.body.value("supports_base64_encoding", false);
    }
    if (s_.batch_size > 0) max = std::min(max, s_.batch_size);
    std::lock_guard lock(mu_);
    max_batch_ = max;
    base64_ = b64;
  }

  int batch_size() const {
    preflight();
    std::lock_guard lock(mu_);
    return max_batch_;
  }

  bool base64_ok() const {
    preflight();
    std::lock_guard lock(mu_);
    return base64_;
  }

  ChromaSettings s_;
  ChromaHttp http_;
  std::string db_;  // "/tenants/<t>/databases/<d>"
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, Collection> cache_;  // by collection name
  mutable bool database_checked_ = false;
  mutable int max_batch_ = 0;
  mutable bool base64_ = false;
};

}  // namespace

std::unique_ptr<VectorStore> make_chroma_store(const json& settings, const StoreContext& ctx,
                                               ChromaDeps deps) {
  ChromaSettings s = parse_chroma_settings(settings);
  std::string token = api_key_from_secret(ctx, "chroma", s.api_key_secret);
  return std::make_unique<ChromaStore>(std::move(s), std::move(token), std::move(deps));
}

}  // namespace quarry::store::chroma
