// Vector mode: embed the query with the serving revision's embedder, ask its store for the
// nearest chunks, then read and highlight only the hits returned (search/hits.h).
#include "search/vector.h"

#include "embed/provider.h"
#include "quarry/error.h"
#include "search/hits.h"
#include "store/vector_store.h"

namespace quarry::search {

std::vector<Hit> vector_candidates(const catalog::KbRef& kb, const std::string& query,
                                   const core::Filter& filter, int depth, const VectorSource& src) {
  store::Query q;
  q.vector = src.provider->embed_query(query);
  q.filter = filter;
  q.top_k = depth;
  std::vector<Hit> out;
  for (auto& f : src.store->query(*src.scope, q)) {
    Hit h;
    h.kb = kb.name;
    h.doc_id = std::move(f.doc_id);
    h.chunk_index = f.chunk_index;
    h.chunk_id = std::move(f.chunk_id);
    h.raw_score = f.raw_score;
    h.score = f.score;
    h.metric = std::move(f.metric);
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<Hit> vector_search(const catalog::Catalog& cat, const catalog::KbRef& kb,
                               const std::string& query, const core::Filter& filter, int top_k,
                               double min_score, const VectorSource& src) {
  if (top_k < 1 || top_k > 1000)
    throw Error(Code::invalid_argument, "top_k must be between 1 and 1000", {{"field", "top_k"}});
  if (min_score < 0 || min_score > 1)
    throw Error(Code::invalid_argument, "min_score must be between 0 and 1",
                {{"field", "min_score"}});
  // Sibling windows of one oversize section collapse to the best, and stale vectors are
  // dropped: ask for a few more than top_k.
  auto hits = vector_candidates(kb, query, filter, top_k * 2 + 10, src);
  std::erase_if(hits, [&](const Hit& h) { return h.score < min_score; });
  complete_hits(cat, kb, query, hits, top_k);
  return hits;
}

}  // namespace quarry::search
