// The retrieval half of the Engine (SPEC §4): search in every mode and grep, over one KB.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/filter.h"
#include "lifecycle/layout.h"
#include "lifecycle/vectors.h"
#include "quarry/types.h"

namespace quarry::lifecycle {

class Retrieval {
 public:
  Retrieval(catalog::Catalog& cat, const Layout& layout, Vectors& vectors)
      : cat_(cat), layout_(layout), vectors_(vectors) {}

  // Answers in the requested mode, or degrades hybrid/auto to keyword and says why in
  // `degraded`. Fills index_status; the caller times the call.
  SearchResponse search(const SearchRequest& r, const KbConfig& config);
  GrepResponse grep(const GrepRequest& r, const KbConfig& config);

 private:
  // Keyword and vector candidates fused; returns the mode that answered ("keyword" when the
  // query could not be embedded right now).
  std::string hybrid(const SearchRequest& r, const KbConfig& config, const core::Filter& filter,
                     KbVectors& vec, SearchResponse& resp);
  std::vector<Hit> grep_as_hits(const SearchRequest& r, const KbConfig& config);

  catalog::Catalog& cat_;
  const Layout& layout_;
  Vectors& vectors_;
};

}  // namespace quarry::lifecycle
