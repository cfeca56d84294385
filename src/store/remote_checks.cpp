#include "store/remote_checks.h"

#include <algorithm>
#include <cstring>

namespace quarry::store {

void dimension_error(const std::string& store, const std::string& what, std::size_t got, int want,
                     const Scope& scope) {
  throw Error(Code::dimension_mismatch,
              what + " has " + std::to_string(got) + " dimensions but KB " + scope.kb +
                  " revision " + scope.revision + " holds " + std::to_string(want) +
                  "-dimension vectors in the " + store +
                  " store; re-embed with the revision's embedder or start a new revision",
              {{"store", store}, {"got", std::to_string(got)}, {"want", std::to_string(want)}});
}

bool check_query(const std::string& store, const Scope& scope, const Query& q) {
  if (q.top_k <= 0) return false;
  if (q.vector.empty())
    throw Error(
        Code::mode_unavailable,
        "the " + store + " store does not embed query text: use the platform embedding mode",
        {{"store", store}});
  if (scope.dimensions > 0 && q.vector.size() != static_cast<std::size_t>(scope.dimensions))
    dimension_error(store, "the query vector", q.vector.size(), scope.dimensions, scope);
  return true;
}

void check_write(const std::string& store, const Scope& scope,
                 const std::vector<const DocumentVectors*>& docs) {
  if (scope.dimensions <= 0)
    throw Error(Code::invalid_argument,
                "the " + store + " store needs the scope's dimensions (> 0)", {{"store", store}});
  check_upsert_batch(store, scope, docs, false);
}

void require_filter(const core::Filter& filter) {
  if (filter.empty())
    throw Error(Code::invalid_argument,
                "delete_where needs a non-empty filter; to delete a whole KB use delete_kb",
                {{"field", "filter"}});
}

UpsertResult RemoteStore::upsert(const Scope& scope, const DocumentVectors& doc, Transaction*) {
  return write(scope, {&doc}).front();
}

std::vector<UpsertResult> RemoteStore::upsert_many(const Scope& scope,
                                                   const std::vector<DocumentVectors>& docs,
                                                   Transaction*) {
  return write(scope, pointers_to(docs));
}

std::vector<UpsertResult> RemoteStore::write(const Scope& scope,
                                             const std::vector<const DocumentVectors*>& docs) {
  check_write(store_, scope, docs);
  if (docs.empty()) return {};
  try {
    return write_page(scope, docs);
  } catch (const Error& e) {
    if (!has_status(e, "404")) throw;
    forget_collection(scope);
    return write_page(scope, docs);
  }
}

void best_first(std::vector<StoreHit>& hits, int top_k) {
  std::stable_sort(hits.begin(), hits.end(),
                   [](const StoreHit& a, const StoreHit& b) { return a.raw_score < b.raw_score; });
  if (hits.size() > static_cast<std::size_t>(top_k)) hits.resize(static_cast<std::size_t>(top_k));
}

std::string vector_bytes(const std::vector<float>& v) {
  std::string bytes(v.size() * sizeof(float), '\0');
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

bool has_status(const Error& e, const std::string& status) {
  auto it = e.details().find("status");
  return it != e.details().end() && it->second == status;
}

}  // namespace quarry::store
