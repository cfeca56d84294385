// The brute-force store of brute_force_store.h: a map from (kb, revision) to documents, each
// holding its metadata as the JSON text it was given and its chunks by index. A query scans
// every chunk of its scope, so no KB or revision can ever see another's vectors.
#include "brute_force_store.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <tuple>

#include "quarry/error.h"
#include "quarry/plugin.h"

namespace quarry_example {
namespace {

using quarry::Code;
using quarry::Error;

void check_length(std::size_t got, std::size_t want) {
  if (want != 0 && got != want)
    throw Error(Code::dimension_mismatch,
                "a vector has " + std::to_string(got) + " dimensions but the scope holds " +
                    std::to_string(want) + "-dimension vectors",
                {{"expected", std::to_string(want)}, {"actual", std::to_string(got)}});
}

double cosine_distance(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += double(a[i]) * b[i];
    na += double(a[i]) * a[i];
    nb += double(b[i]) * b[i];
  }
  return na == 0 || nb == 0 ? 1.0 : std::clamp(1.0 - dot / std::sqrt(na * nb), 0.0, 2.0);
}

class BruteForceStore final : public quarry::VectorStore {
 public:
  std::string id() const override { return kBruteForceStoreId; }
  quarry::StoreCapabilities capabilities() const override {
    quarry::StoreCapabilities c;
    c.tenancy = "row_filter";
    return c;
  }

  quarry::UpsertResult upsert(const quarry::StoreScope& scope, const quarry::DocumentVectors& doc,
                              quarry::StoreTransaction*) override {
    // The port's own checks: vector lengths, repeated chunk indexes, metadata an object.
    quarry::check_upsert_batch(id(), scope, {doc}, false);
    std::unique_lock lock(mu_);
    Scope& s = scopes_[{scope.kb, scope.revision}];
    std::size_t dims = s.dims;  // every vector of a scope has one length
    for (const auto& c : doc.chunks) {
      check_length(c.vector.size(), dims);
      dims = c.vector.size();
    }
    Doc next{doc.metadata_json, {}};
    quarry::UpsertResult r;
    const Doc* old = s.docs.count(doc.doc_id) ? &s.docs[doc.doc_id] : nullptr;
    for (const auto& c : doc.chunks) {
      bool same = old && old->chunks.count(c.chunk_index) &&
                  old->chunks.at(c.chunk_index).vector == c.vector &&
                  old->chunks.at(c.chunk_index).chunk_id == c.chunk_id;
      same ? ++r.skipped : ++r.written;
      next.chunks[c.chunk_index] = c;
    }
    s.dims = dims;
    if (next.chunks.empty())
      s.docs.erase(doc.doc_id);
    else
      s.docs[doc.doc_id] = std::move(next);
    return r;
  }

  std::vector<quarry::StoreHit> query(const quarry::StoreScope& scope,
                                      const quarry::VectorQuery& q) const override {
    if (q.top_k <= 0) return {};
    check_length(q.vector.size(), static_cast<std::size_t>(std::max(scope.dimensions, 0)));
    std::shared_lock lock(mu_);
    auto it = scopes_.find({scope.kb, scope.revision});
    if (it == scopes_.end()) return {};
    check_length(q.vector.size(), it->second.dims);
    std::vector<quarry::StoreHit> hits;
    for (const auto& [doc_id, d] : it->second.docs) {
      if (!q.filter.empty() && !quarry::filter_matches(q.filter, d.metadata_json)) continue;
      for (const auto& [index, c] : d.chunks) {
        double distance = cosine_distance(q.vector, c.vector);
        hits.push_back({doc_id, index, c.chunk_id, distance, quarry::cosine_score(distance)});
      }
    }
    auto k = std::min(hits.size(), static_cast<std::size_t>(q.top_k));
    std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(k), hits.end(),
                      [](const auto& a, const auto& b) {
                        return std::tie(a.raw_score, a.doc_id, a.chunk_index) <
                               std::tie(b.raw_score, b.doc_id, b.chunk_index);
                      });
    hits.resize(k);
    return hits;
  }

  int delete_document(const std::string& kb, const std::string& doc_id,
                      quarry::StoreTransaction*) override {
    return erase(
        kb, [&](const std::string&, const std::string& id, const Doc&) { return id == doc_id; });
  }
  int delete_kb(const std::string& kb, quarry::StoreTransaction*) override {
    return erase(kb, [](const std::string&, const std::string&, const Doc&) { return true; });
  }
  int delete_where(const std::string& kb, const quarry::Filter& filter,
                   quarry::StoreTransaction*) override {
    if (filter.empty())
      throw Error(Code::invalid_argument, "delete_where needs a filter; delete_kb deletes all");
    return erase(kb, [&](const std::string&, const std::string&, const Doc& d) {
      return quarry::filter_matches(filter, d.metadata_json);
    });
  }
  int delete_other_revisions(const std::string& kb, const std::string& keep) override {
    return erase(
        kb, [&](const std::string& rev, const std::string&, const Doc&) { return rev != keep; });
  }
  bool has(const quarry::StoreScope& scope, const std::string& doc_id) const override {
    std::shared_lock lock(mu_);
    auto it = scopes_.find({scope.kb, scope.revision});
    return it != scopes_.end() && it->second.docs.count(doc_id) > 0;
  }
  std::int64_t count(const quarry::StoreScope& scope) const override {
    std::shared_lock lock(mu_);
    auto it = scopes_.find({scope.kb, scope.revision});
    std::int64_t n = 0;
    if (it != scopes_.end())
      for (const auto& [id, d] : it->second.docs) n += static_cast<std::int64_t>(d.chunks.size());
    return n;
  }

 private:
  struct Doc {
    std::string metadata_json;
    std::map<int, quarry::ChunkVector> chunks;
  };
  struct Scope {
    std::size_t dims = 0;  // 0 until the first vector
    std::map<std::string, Doc> docs;
  };
  using Pred = std::function<bool(const std::string& rev, const std::string& id, const Doc&)>;

  // Erases the KB's documents `pred` picks, in every revision; returns the chunks that went.
  int erase(const std::string& kb, const Pred& pred) {
    std::unique_lock lock(mu_);
    int n = 0;
    for (auto& [key, s] : scopes_) {
      if (key.first != kb) continue;
      for (auto it = s.docs.begin(); it != s.docs.end();) {
        if (!pred(key.second, it->first, it->second)) {
          ++it;
          continue;
        }
        n += static_cast<int>(it->second.chunks.size());
        it = s.docs.erase(it);
      }
    }
    return n;
  }

  mutable std::shared_mutex mu_;
  std::map<std::pair<std::string, std::string>, Scope> scopes_;  // by (kb, revision)
};

}  // namespace

void register_brute_force_store() {
  quarry::register_store(
      kBruteForceStoreId, [](const quarry::Settings& settings, const quarry::StoreContext&) {
        for (const auto& key : settings.keys())  // it has none: say so rather than ignore a typo
          throw Error(Code::invalid_argument,
                      "unknown brute-force store setting '" + key + "': this store takes none",
                      {{"field", key}});
        return std::make_unique<BruteForceStore>();
      });
}

}  // namespace quarry_example
