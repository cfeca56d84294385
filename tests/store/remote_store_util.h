// Small helpers shared by the store-specific tests of the remote stores (chroma, qdrant,
// pgvector): short unit-ish vectors, documents of n chunks, and the set of documents a filter
// selects through a store.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/filter.h"
#include "store/vector_store.h"

namespace quarry::store::contract {

// A vector pointing (mostly) along axis i % dim.
inline std::vector<float> unit(int i, int dim = 4) {
  std::vector<float> v(static_cast<std::size_t>(dim), 0.01f);
  v[static_cast<std::size_t>(i % dim)] = 1;
  return v;
}

inline DocumentVectors doc(const std::string& id, int chunks,
                           nlohmann::json meta = nlohmann::json::object()) {
  DocumentVectors d{id, meta.dump(), {}};
  for (int i = 0; i < chunks; ++i)
    d.chunks.push_back({i, id + "#" + std::to_string(i), unit(i), ""});
  return d;
}

// The documents of `scope` whose metadata matches `filter` (a §4 filter as JSON text).
inline std::set<std::string> docs_matching(VectorStore& s, const Scope& scope, const char* filter) {
  Query q;
  q.vector = unit(0);
  q.top_k = 1000;
  q.filter = core::parse_filter_text(filter);
  std::set<std::string> out;
  for (const auto& h : s.query(scope, q)) out.insert(h.doc_id);
  return out;
}

}  // namespace quarry::store::contract
