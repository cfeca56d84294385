// The qdrant store: the port's calls as Qdrant REST requests (layout: the header). Request
// shapes, from Qdrant's API reference (https://api.qdrant.tech/api-reference, v1.11 to v1.19):
//   GET    /collections                          -> {collections: [{name}]}
//   (collections/get-collections) GET    /collections/{name}                   -> {config: {params:
//   {vectors: {size, distance}}}} PUT    /collections/{name}                   {vectors: {size,
//   distance}, hnsw_config: {m, ef_construct}} DELETE /collections/{name} PUT
//   /collections/{name}/index?wait=true   {field_name, field_schema: {type: keyword, is_tenant}}
//   PUT    /collections/{name}/points?wait=true  {points: [{id, vector, payload}]}
//   (points/upsert-points) POST   /collections/{name}/points/delete?wait=true  {filter} | {points:
//   [ids]} POST   /collections/{name}/points/scroll     {filter, limit, offset, with_payload,
//   with_vector} POST   /collections/{name}/points/search     {vector, limit, filter, with_payload,
//   params} POST   /collections/{name}/points/count      {filter, exact: true} -> {count}
// Reads of a collection that does not exist are empty; only upsert creates one.
//
// Counts: Qdrant's delete answers an operation status, not a count, so every delete counts
// first (exact count with the same filter), then deletes by that filter with wait=true.
// In namespace tenancy every filter starts with the KB condition: no request can reach
// another KB's points.
#include <algorithm>
#include <mutex>
#include <set>
#include <unordered_map>

#include "core/util.h"
#include "quarry/error.h"
#include "store/qdrant/qdrant_http.h"
#include "store/qdrant/qdrant_store.h"
#include "store/remote_call.h"
#include "store/remote_checks.h"

namespace quarry::store::qdrant {
using nlohmann::json;

namespace {

constexpr const char* kStore = "qdrant";

std::string content_sha(const std::vector<float>& v, const json& payload) {
  return core::sha256_hex(vector_bytes(v) + payload.dump()).substr(0, 16);
}

json filter_of(std::vector<json> must) {
  return {{"must", std::move(must)}};
}

class QdrantStore final : public RemoteStore {
 public:
  QdrantStore(QdrantSettings s, std::string key, QdrantDeps deps)
      : RemoteStore(kStore), s_(std::move(s)), http_(s_, std::move(key), std::move(deps)) {}

  std::string id() const override { return "qdrant"; }

  Capabilities capabilities() const override {
    Capabilities c;
    c.metadata_filter = true;  // all of §4 except string order and |numbers| >= 2^53
    c.hybrid = false;
    c.namespaces = s_.tenancy == "namespace";
    c.hard_delete = true;
    c.native_dimensions = false;
    c.embeds_on_write = false;
    c.tenancy = s_.tenancy;  // namespace | collection
    return c;
  }

  std::vector<StoreHit> query(const Scope& scope, const Query& q) const override {
    if (!check_query(kStore, scope, q)) return {};
    json user = translate_filter(q.filter);  // before any I/O: refuse what cannot be exact
    const std::string name = collection_name(s_, scope.kb, scope.revision);
    int dims = dimensions_of(name);
    if (dims == 0) return {};
    if (q.vector.size() != static_cast<std::size_t>(dims))
      dimension_error(kStore, "the query vector", q.vector.size(), dims, scope);
    std::vector<json> must = {kb_condition(scope.kb)};
    if (!user.is_null()) must.push_back(std::move(user));
    json body = {{"vector", q.vector},
                 {"limit", q.top_k},
                 {"filter", filter_of(std::move(must))},
                 {"with_payload", json::array({kDocKey, kIndexKey, kChunkIdKey})}};
    json params = json::object();
    if (s_.exact) params["exact"] = true;
    if (s_.hnsw_ef > 0) params["hnsw_ef"] = s_.hnsw_ef;
    if (!params.empty()) body["params"] = std::move(params);
    Reply r = on(name, "POST", "/points/search", &body);
    std::vector<StoreHit> hits;
    if (!r.result.is_array()) return hits;
    for (const auto& p : r.result) {
      const json& pl = p.contains("payload") && p["payload"].is_object() ? p["payload"] : json();
      StoreHit h;
      h.doc_id = pl.is_object() ? pl.value(kDocKey, "") : "";
      h.chunk_index = pl.is_object() ? pl.value(kIndexKey, 0) : 0;
      h.chunk_id = pl.is_object() ? pl.value(kChunkIdKey, "") : "";
      // Qdrant's Cosine score is the similarity; the port's raw score is the distance.
      double sim = p.contains("score") && p["score"].is_number() ? p["score"].get<double>() : -1;
      h.raw_score = std::clamp(1.0 - sim, 0.0, 2.0);
      h.score = cosine_score(h.raw_score);
      hits.push_back(std::move(h));
    }
    best_first(hits, q.top_k);
    return hits;
  }

  int delete_document(const std::string& kb, const std::string& doc_id, Transaction*) override {
    int n = 0;
    json doc = {{"key", kDocKey}, {"match", {{"value", doc_id}}}};
    for (const auto& name : kb_collections(kb)) n += delete_matching(name, kb, doc);
    return n;
  }

  int delete_kb(const std::string& kb, Transaction*) override {
    int n = 0;
    for (const auto& name : kb_collections(kb)) {
      if (s_.tenancy == "collection")
        n += drop(name, kb);
      else
        n += delete_matching(name, kb, nullptr);
    }
    return n;
  }

  int delete_where(const std::string& kb, const core::Filter& filter, Transaction*) override {
    require_filter(filter);
    json user = translate_filter(filter);
    int n = 0;
    for (const auto& name : kb_collections(kb)) n += delete_matching(name, kb, user);
    return n;
  }

  int delete_other_revisions(const std::string& kb, const std::string& keep) override {
    const std::string kept = collection_name(s_, kb, keep);
    int n = 0;
    for (const auto& name : kb_collections(kb)) {
      if (name == kept) continue;
      n += s_.tenancy == "collection" ? drop(name, kb) : delete_matching(name, kb, nullptr);
    }
    return n;
  }

  bool has(const Scope& scope, const std::string& doc_id) const override {
    json doc = {{"key", kDocKey}, {"match", {{"value", doc_id}}}};
    return count_matching(collection_name(s_, scope.kb, scope.revision), scope.kb, doc) > 0;
  }

  std::int64_t count(const Scope& scope) const override {
    return count_matching(collection_name(s_, scope.kb, scope.revision), scope.kb, nullptr);
  }

  bool is_available() const override { return http_.reachable(); }

 private:
  // --- collections -------------------------------------------------------------------------

  std::string path(const std::string& name, const std::string& op) const {
    return "/collections/" + path_segment(name) + op;
  }

  Reply on(const std::string& name, const std::string& method, const std::string& op,
           const json* body) const {
    Reply r = http_.call(method, path(name, op), body, true);
    if (r.status == 404) forget(name);
    return r;
  }

  // The collection's vector size; 0 when it does not exist.
  int dimensions_of(const std::string& name) const {
    {
      std::lock_guard lock(mu_);
      if (auto it = dims_.find(name); it != dims_.end()) return it->second;
    }
    Reply r = http_.call("GET", path(name, ""), nullptr, true);
    if (r.status == 404) return 0;
    int dims = 0;
    try {
      dims = r.result.at("config").at("params").at("vectors").at("size").get<int>();
    } catch (const std::exception&) {
      throw Error(Code::upstream_error,
                  "Qdrant collection " + name +
                      " has no single unnamed vector of a known size; it was not made by "
                      "Quarry: pick another collection_prefix",
                  {{"store", "qdrant"}, {"collection", name}});
    }
    std::lock_guard lock(mu_);
    dims_[name] = dims;
    return dims;
  }

  void forget(const std::string& name) const {
    std::lock_guard lock(mu_);
    dims_.erase(name);
  }

  std::string ensure_collection(const Scope& scope) {
    const std::string name = collection_name(s_, scope.kb, scope.revision);
    int dims = dimensions_of(name);
    if (dims == 0) {
      json body = {{"vectors", {{"size", scope.dimensions}, {"distance", "Cosine"}}},
                   {"hnsw_config", {{"m", s_.hnsw_m}, {"ef_construct", s_.hnsw_ef_construct}}}};
      try {
        http_.call("PUT", path(name, ""), &body);
      } catch (const Error&) {  // a concurrent creator won the race (409, or 400 before 1.9)
        if (dimensions_of(name) == 0) throw;
      }
      // The KB field is the tenant key (payload multitenancy); the document field serves the
      // per-document deletes and upserts. Both idempotent.
      json kb_index = {{"field_name", kKbKey},
                       {"field_schema", {{"type", "keyword"}, {"is_tenant", true}}}};
      http_.call("PUT", path(name, "/index?wait=true"), &kb_index);
      json doc_index = {{"field_name", kDocKey}, {"field_schema", "keyword"}};
      http_.call("PUT", path(name, "/index?wait=true"), &doc_index);
      dims = dimensions_of(name);
    }
    if (dims != scope.dimensions)
      dimension_error(kStore, "the upsert's scope", static_cast<std::size_t>(scope.dimensions),
                      dims, scope);
    return name;
  }

  // Every collection of the store that may hold the KB's points (all revisions).
  std::vector<std::string> kb_collections(const std::string& kb) const {
    Reply r = http_.call("GET", "/collections");
    const std::string family = collection_family(s_, kb);
    std::vector<std::string> out;
    if (!r.result.is_object() || !r.result["collections"].is_array()) return out;
    for (const auto& c : r.result["collections"]) {
      std::string name = c.value("name", "");
      if (name.rfind(family, 0) == 0) out.push_back(name);
    }
    return out;
  }

  json kb_filter(const std::string& kb, const json& extra) const {
    std::vector<json> must = {kb_condition(kb)};
    if (!extra.is_null()) must.push_back(extra);
    return filter_of(std::move(must));
  }

  std::int64_t count_matching(const std::string& name, const std::string& kb,
                              const json& extra) const {
    json body = {{"filter", kb_filter(kb, extra)}, {"exact", true}};
    Reply r = on(name, "POST", "/points/count", &body);
    if (r.status == 404 || !r.result.is_object() || !r.result["count"].is_number_integer())
      return 0;
    return r.result["count"].get<std::int64_t>();
  }

  int delete_matching(const std::string& name, const std::string& kb, const json& extra) {
    std::int64_t n = count_matching(name, kb, extra);
    if (n == 0) return 0;
    json body = {{"filter", kb_filter(kb, extra)}};
    on(name, "POST", "/points/delete?wait=true", &body);
    return static_cast<int>(n);
  }

  int drop(const std::string& name, const std::string& kb) {
    std::int64_t n = count_matching(name, kb, nullptr);
    http_.call("DELETE", path(name, ""), nullptr, true);
    forget(name);
    return static_cast<int>(n);
  }

  // --- writes --------------------------------------------------------------------------------

  std::vector<UpsertResult> write_page(const Scope& scope,
                                       const std::vector<const DocumentVectors*>& docs) override {
    return upsert_into(ensure_collection(scope), scope, docs);
  }
  void forget_collection(const Scope& scope) override {
    forget(collection_name(s_, scope.kb, scope.revision));
  }

  // What is stored for the documents now: point id -> content sha (one paged scroll).
  std::unordered_map<std::string, std::string> stored(
      const std::string& name, const std::string& kb,
      const std::vector<const DocumentVectors*>& docs) {
    std::unordered_map<std::string, std::string> out;
    json offset;  // null: from the start
    json doc;
    if (docs.size() == 1) {
      doc = {{"key", kDocKey}, {"match", {{"value", docs[0]->doc_id}}}};
    } else {
      json any = json::array();
      for (const auto* d : docs) any.push_back(d->doc_id);
      doc = {{"key", kDocKey}, {"match", {{"any", std::move(any)}}}};
    }
    do {
      json body = {{"filter", kb_filter(kb, doc)},
                   {"limit", s_.batch_size},
                   {"with_payload", json::array({kShaKey})},
                   {"with_vector", false}};
      if (!offset.is_null()) body["offset"] = offset;
      Reply r = http_.call("POST", path(name, "/points/scroll"), &body);
      if (!r.result.is_object() || !r.result["points"].is_array()) break;
      for (const auto& p : r.result["points"]) {
        const json& pl = p.contains("payload") ? p["payload"] : json();
        out[p["id"].is_string() ? p["id"].get<std::string>() : p["id"].dump()] =
            pl.is_object() ? pl.value(kShaKey, "") : "";
      }
      offset = r.result.contains("next_page_offset") ? r.result["next_page_offset"] : json();
    } while (!offset.is_null());
    return out;
  }

  std::vector<UpsertResult> upsert_into(const std::string& name, const Scope& scope,
                                        const std::vector<const DocumentVectors*>& docs) {
    auto existing = stored(name, scope.kb, docs);
    std::vector<UpsertResult> res(docs.size());
    std::set<std::string> keep;
    json points = json::array();
    std::vector<std::size_t> owner;  // points[i] belongs to docs[owner[i]]
    for (std::size_t d = 0; d < docs.size(); ++d) {
      const DocumentVectors& doc = *docs[d];
      const json md = metadata_of(doc);
      const json meta = payload_metadata(md);
      const json has = present_paths(md);
      for (const auto& ch : doc.chunks) {
        json pl = {{kKbKey, scope.kb},
                   {kRevisionKey, scope.revision},
                   {kDocKey, doc.doc_id},
                   {kIndexKey, ch.chunk_index},
                   {kChunkIdKey, ch.chunk_id},
                   {kHasKey, has},
                   {kMetaKey, meta}};
        pl[kShaKey] = content_sha(ch.vector, pl);
        std::string id = point_id(scope.kb, doc.doc_id, ch.chunk_index);
        keep.insert(id);
        auto it = existing.find(id);
        if (it != existing.end() && it->second == pl[kShaKey]) {
          ++res[d].skipped;
          continue;
        }
        points.push_back({{"id", id}, {"vector", ch.vector}, {"payload", std::move(pl)}});
        owner.push_back(d);
      }
    }

    json stale = json::array();
    for (const auto& [id, sha] : existing)
      if (!keep.count(id)) stale.push_back(id);
    if (!stale.empty()) {  // chunks the documents no longer have
      json body = {{"points", std::move(stale)}};
      http_.call("POST", path(name, "/points/delete?wait=true"), &body);
    }

    const auto batch = static_cast<std::size_t>(s_.batch_size);
    for (std::size_t from = 0; from < points.size(); from += batch) {
      json part = json::array();
      const std::size_t to = std::min(points.size(), from + batch);
      for (std::size_t j = from; j < to; ++j) part.push_back(std::move(points[j]));
      json body = {{"points", std::move(part)}};
      http_.call("PUT", path(name, "/points?wait=true"), &body);
      for (std::size_t j = from; j < to; ++j) ++res[owner[j]].written;
    }
    return res;
  }

  QdrantSettings s_;
  QdrantHttp http_;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, int> dims_;  // collection name -> vector size
};

}  // namespace

std::unique_ptr<VectorStore> make_qdrant_store(const json& settings, const StoreContext& ctx,
                                               QdrantDeps deps) {
  QdrantSettings s = parse_qdrant_settings(settings);
  std::string key = api_key_from_secret(ctx, "qdrant", s.api_key_secret);
  return std::make_unique<QdrantStore>(std::move(s), std::move(key), std::move(deps));
}

}  // namespace quarry::store::qdrant
