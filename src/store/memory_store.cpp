// The in-memory store: exact cosine by brute force in double precision. It is the reference the
// contract suite compares every other store against, and a fake for the layers above the port.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "quarry/deadline.h"
#include "quarry/error.h"
#include "store/vector_store.h"

namespace quarry::store {
namespace {

[[noreturn]] void mismatch(std::size_t got, int want) {
  throw Error(Code::dimension_mismatch,
              "vector has " + std::to_string(got) + " dimensions but the scope holds " +
                  std::to_string(want) + "-dimensional vectors",
              {{"expected", std::to_string(want)}, {"actual", std::to_string(got)}});
}

double cosine_distance(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0 || nb == 0) return 1.0;
  return std::clamp(1.0 - dot / std::sqrt(na * nb), 0.0, 2.0);
}

class MemoryStore final : public VectorStore {
 public:
  std::string id() const override { return "memory"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.tenancy = "row_filter";
    return c;
  }

  UpsertResult upsert(const Scope& scope, const DocumentVectors& doc, Transaction*) override {
    nlohmann::json metadata = metadata_of(doc);
    std::map<int, ChunkVector> chunks;
    for (const auto& c : doc.chunks) {
      if (scope.dimensions > 0 && c.vector.size() != static_cast<std::size_t>(scope.dimensions))
        mismatch(c.vector.size(), scope.dimensions);
      if (c.vector.empty() || c.vector.size() != doc.chunks.front().vector.size())
        mismatch(c.vector.size(), static_cast<int>(doc.chunks.front().vector.size()));
      if (!chunks.emplace(c.chunk_index, c).second)
        throw Error(Code::invalid_argument, "chunk_index " + std::to_string(c.chunk_index) +
                                                " appears twice in document " + doc.doc_id);
    }
    std::unique_lock lock(mu_);
    auto& s = scopes_[{scope.kb, scope.revision}];
    if (s.dims && !chunks.empty() && chunks.begin()->second.vector.size() != s.dims)
      mismatch(chunks.begin()->second.vector.size(), static_cast<int>(s.dims));
    UpsertResult r;
    auto old = s.docs.find(doc.doc_id);
    for (const auto& [i, c] : chunks) {
      bool same = false;
      if (old != s.docs.end()) {
        auto o = old->second.chunks.find(i);
        same = o != old->second.chunks.end() && o->second.vector == c.vector &&
               o->second.chunk_id == c.chunk_id;
      }
      same ? ++r.skipped : ++r.written;
    }
    if (chunks.empty()) {
      s.docs.erase(doc.doc_id);
    } else {
      s.dims = chunks.begin()->second.vector.size();
      s.docs[doc.doc_id] = Doc{std::move(metadata), std::move(chunks)};
    }
    return r;
  }

  std::vector<StoreHit> query(const Scope& scope, const Query& q) const override {
    if (q.top_k <= 0) return {};
    if (scope.dimensions > 0 && q.vector.size() != static_cast<std::size_t>(scope.dimensions))
      mismatch(q.vector.size(), scope.dimensions);
    std::shared_lock lock(mu_);
    auto it = scopes_.find({scope.kb, scope.revision});
    if (it == scopes_.end() || it->second.docs.empty()) return {};
    if (q.vector.size() != it->second.dims)
      mismatch(q.vector.size(), static_cast<int>(it->second.dims));
    std::vector<StoreHit> hits;
    for (const auto& [doc_id, d] : it->second.docs) {
      check_deadline();
      if (!q.filter.empty() && !core::filter_matches(q.filter, d.metadata)) continue;
      for (const auto& [i, c] : d.chunks) {
        StoreHit h;
        h.doc_id = doc_id;
        h.chunk_index = i;
        h.chunk_id = c.chunk_id;
        h.raw_score = cosine_distance(q.vector, c.vector);
        h.score = cosine_score(h.raw_score);
        hits.push_back(std::move(h));
      }
    }
    auto k = std::min(hits.size(), static_cast<std::size_t>(q.top_k));
    std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(k), hits.end(),
                      [](const StoreHit& a, const StoreHit& b) {
                        if (a.raw_score != b.raw_score) return a.raw_score < b.raw_score;
                        return std::tie(a.doc_id, a.chunk_index) <
                               std::tie(b.doc_id, b.chunk_index);
                      });
    hits.resize(k);
    return hits;
  }

  int delete_document(const std::string& kb, const std::string& doc_id, Transaction*) override {
    return erase_docs(
        kb, [&](const std::string&, const std::string& id, const Doc&) { return id == doc_id; });
  }
  int delete_kb(const std::string& kb, Transaction*) override {
    return erase_docs(kb, [](const std::string&, const std::string&, const Doc&) { return true; });
  }
  int delete_where(const std::string& kb, const core::Filter& filter, Transaction*) override {
    if (filter.empty())
      throw Error(Code::invalid_argument,
                  "delete_where needs a non-empty filter; use delete_kb to delete everything");
    return erase_docs(kb, [&](const std::string&, const std::string&, const Doc& d) {
      return core::filter_matches(filter, d.metadata);
    });
  }
  int delete_other_revisions(const std::string& kb, const std::string& keep) override {
    return erase_docs(
        kb, [&](const std::string& rev, const std::string&, const Doc&) { return rev != keep; });
  }
  bool has(const Scope& scope, const std::string& doc_id) const override {
    std::shared_lock lock(mu_);
    auto it = scopes_.find({scope.kb, scope.revision});
    return it != scopes_.end() && it->second.docs.count(doc_id) > 0;
  }
  std::int64_t count(const Scope& scope) const override {
    std::shared_lock lock(mu_);
    auto it = scopes_.find({scope.kb, scope.revision});
    std::int64_t n = 0;
    if (it != scopes_.end())
      for (const auto& [id, d] : it->second.docs) n += static_cast<std::int64_t>(d.chunks.size());
    return n;
  }

 private:
  struct Doc {
    nlohmann::json metadata;
    std::map<int, ChunkVector> chunks;
  };
  struct ScopeData {
    std::size_t dims = 0;
    std::map<std::string, Doc> docs;
  };

  template <typename Pred>
  int erase_docs(const std::string& kb, Pred pred) {
    std::unique_lock lock(mu_);
    int n = 0;
    for (auto it = scopes_.begin(); it != scopes_.end();) {
      if (it->first.first != kb) {
        ++it;
        continue;
      }
      auto& docs = it->second.docs;
      for (auto d = docs.begin(); d != docs.end();) {
        if (pred(it->first.second, d->first, d->second)) {
          n += static_cast<int>(d->second.chunks.size());
          d = docs.erase(d);
        } else {
          ++d;
        }
      }
      it = docs.empty() ? scopes_.erase(it) : std::next(it);
    }
    return n;
  }

  mutable std::shared_mutex mu_;
  std::map<std::pair<std::string, std::string>, ScopeData> scopes_;
};

}  // namespace

PluginSchema memory_store_schema() {
  PluginSchema s;
  s.description = "Vectors in this process's memory, brute-force search: tests and experiments.";
  return s;  // no settings: the factory refuses any
}

std::unique_ptr<VectorStore> make_memory_store() {
  return std::make_unique<MemoryStore>();
}

}  // namespace quarry::store
