// The request skeleton the remote stores (chroma, qdrant) share: what a query, a write and a
// delete check before any I/O, and how a query's hits are put in order. One place, so that the
// stores refuse the same things with the same codes and messages.
#pragma once

#include <string>
#include <vector>

#include "core/filter.h"
#include "quarry/error.h"
#include "store/vector_store.h"

namespace quarry::store {

// Error(dimension_mismatch): `what` ("the query vector") has `got` dimensions where the scope
// of `store` holds `want`.
[[noreturn]] void dimension_error(const std::string& store, const std::string& what,
                                  std::size_t got, int want, const Scope& scope);

// Before a query's I/O: false for an availability probe (top_k <= 0: the answer is empty);
// Error(mode_unavailable) without a vector (these stores do not embed query text) and
// dimension_mismatch when the vector's length differs from the scope's.
bool check_query(const std::string& store, const Scope& scope, const Query& q);

// Before a write's I/O: the scope's dimensions are known (invalid_argument) and every document
// passes check_upsert_batch (a vector for every chunk).
void check_write(const std::string& store, const Scope& scope,
                 const std::vector<const DocumentVectors*>& docs);

// delete_where() refuses the empty filter (invalid_argument): delete_kb deletes everything.
void require_filter(const core::Filter& filter);

// The write path of the remote stores: a single upsert and a page go through one write, every
// document checked before any I/O (check_write), and a write that finds the scope's collection
// dropped by someone else since the store cached it (HTTP 404) is tried once more.
class RemoteStore : public VectorStore {
 public:
  UpsertResult upsert(const Scope& scope, const DocumentVectors& doc, Transaction*) final;
  std::vector<UpsertResult> upsert_many(const Scope& scope,
                                        const std::vector<DocumentVectors>& docs,
                                        Transaction*) final;

 protected:
  explicit RemoteStore(std::string store) : store_(std::move(store)) {}

  // Writes a checked, non-empty page into the scope's collection, making it when missing.
  virtual std::vector<UpsertResult> write_page(const Scope& scope,
                                               const std::vector<const DocumentVectors*>& docs) = 0;
  // Forgets what the store cached about the scope's collection.
  virtual void forget_collection(const Scope& scope) = 0;

 private:
  std::vector<UpsertResult> write(const Scope& scope,
                                  const std::vector<const DocumentVectors*>& docs);

  std::string store_;
};

// Best first (ascending raw score, ties in the server's order), at most top_k.
void best_first(std::vector<StoreHit>& hits, int top_k);

// A vector's float32 bytes, for content hashes (servers return floats rounded, not bit-exact).
std::string vector_bytes(const std::vector<float>& v);

// Whether an error from the HTTP layer carries this HTTP status ("404").
bool has_status(const Error& e, const std::string& status);

}  // namespace quarry::store
