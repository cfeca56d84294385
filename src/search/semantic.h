// Vector and hybrid retrieval (SPEC §4): the query's embedding against one KB's vectors of its
// current revision, and the fusion of keyword and vector candidate lists.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/filter.h"
#include "quarry/types.h"

namespace quarry::embed {
class EmbeddingProvider;
}
namespace quarry::store {
class VectorStore;
struct Scope;
}  // namespace quarry::store

namespace quarry::search {

// Where a KB's vectors live and how its queries are embedded.
struct VectorSource {
  embed::EmbeddingProvider* provider = nullptr;
  store::VectorStore* store = nullptr;
  const store::Scope* scope = nullptr;
};

// k-nearest chunks of the query; score = 1 - cosine_distance / 2, metric "cosine_distance".
// Sub-windows of one oversize section collapse to the best. Throws what the provider throws.
std::vector<Hit> vector_search(const catalog::Catalog& cat, const std::string& kb,
                               const std::string& query, const core::Filter& filter, int top_k,
                               double min_score, const VectorSource& src);

// The store's nearest chunks as bare hits (kb, doc_id, chunk_index, chunk_id, scores): no
// catalog rows are read, so a fusion can rank many candidates and load only its winners.
std::vector<Hit> vector_candidates(const std::string& kb, const std::string& query,
                                   const core::Filter& filter, int depth, const VectorSource& src);

// Fills bare hits (those without a filename) from the catalog, keeping their scores; drops those
// whose chunk is gone or was re-chunked since (stale vectors) and sibling windows of a section
// already listed; cuts to top_k. Hits without a snippet get one highlighting the query's words
// (`advanced`: the query is FTS5 syntax). A bare hit whose chunk is in `done` (complete hits,
// e.g. another list of the same query) is copied from there instead of read again.
void complete_hits(const catalog::Catalog& cat, const std::string& kb, const std::string& query,
                   std::vector<Hit>& hits, int top_k, bool advanced = false,
                   const std::vector<Hit>* done = nullptr);

struct FusionOptions {
  std::string fusion = "interpolation";  // interpolation | rrf
  double semantic_ratio = 0.1;           // α: (1 - α)·keyword + α·vector
  int rrf_k = 60;
  double keyword_weight = 1.0;
  double vector_weight = 1.0;
};

// Fuses two best-first candidate lists into at most top_k hits, best first.
//  interpolation: each mode's raw scores min-max scaled over that mode's candidates (a chunk
//    missing from a list scores 0 there), then (1 - α)·keyword + α·vector; already in [0, 1].
//  rrf: Σ w_m / (k + rank_m), divided by its maximum Σ w_m / (k + 1).
// A chunk keeps the keyword hit's snippet when it has one. min_score applies to fused scores.
std::vector<Hit> fuse(const std::vector<Hit>& keyword, const std::vector<Hit>& vector,
                      const FusionOptions& o, int top_k, double min_score);

// How many candidates each mode contributes to a fusion that must return top_k.
int fusion_depth(int top_k);
int vector_fusion_depth(int top_k);

}  // namespace quarry::search
