// The Engine's reads of a KB's content (SPEC §4): search in every mode and grep. Each runs in
// one read snapshot of the catalog, resolves its KB once inside it, and marks this process as
// answering a query so background sweeps make way (lifecycle/foreground.h).
#include "engine/engine_impl.h"
#include "engine/serving_vectors.h"
#include "search/retrieval.h"

namespace quarry::engine {

SearchResponse EngineImpl::search(const SearchRequest& r) {
  // Background sweeps make way: this process's, and other processes' on this data directory.
  lifecycle::foreground::Query mark(foreground());
  auto t0 = std::chrono::steady_clock::now();
  catalog::Catalog::ReadSnapshot snapshot(*cat_);
  const Kb kb = resolve(r.kb);
  ServingVectors vectors(*vectors_, kb.ref, kb.config);
  SearchResponse resp = search::search(r, {*cat_, layout_, kb.ref, kb.config, vectors});
  resp.took_ms = ms_since(t0);
  return resp;
}

GrepResponse EngineImpl::grep(const GrepRequest& r) {
  lifecycle::foreground::Query mark(foreground());
  auto t0 = std::chrono::steady_clock::now();
  catalog::Catalog::ReadSnapshot snapshot(*cat_);
  const Kb kb = resolve(r.kb);
  ServingVectors vectors(*vectors_, kb.ref, kb.config);
  GrepResponse out = search::grep(r, {*cat_, layout_, kb.ref, kb.config, vectors});
  out.took_ms = ms_since(t0);
  return out;
}

}  // namespace quarry::engine
