// Vector mode (SPEC §4): the query's embedding against one KB's vectors of its serving revision.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/filter.h"
#include "embed/provider.h"
#include "quarry/types.h"
#include "store/vector_store.h"

namespace quarry::search {

// Where a KB's vectors live and how its queries are embedded: the serving revision's embedder,
// store and scope, as the facade resolved them (search never chooses a revision itself).
struct VectorSource {
  embed::EmbeddingProvider* provider = nullptr;
  store::VectorStore* store = nullptr;
  const store::Scope* scope = nullptr;
};

// k-nearest chunks of the query; score = 1 - cosine_distance / 2, metric "cosine_distance".
// Sub-windows of one oversize section collapse to the best. Throws what the provider throws.
std::vector<Hit> vector_search(const catalog::Catalog& cat, const catalog::KbRef& kb,
                               const std::string& query, const core::Filter& filter, int top_k,
                               double min_score, const VectorSource& src);

// The store's nearest chunks as bare hits (kb, doc_id, chunk_index, chunk_id, scores): no
// catalog rows are read, so a fusion can rank many candidates and load only its winners.
std::vector<Hit> vector_candidates(const catalog::KbRef& kb, const std::string& query,
                                   const core::Filter& filter, int depth, const VectorSource& src);

}  // namespace quarry::search
