// Mode dispatch (SPEC §4): which mode answers a search over one KB, hybrid and auto degrading to
// keyword with a reason, the hybrid orchestration, and grep over the KB's Markdown files.
//
// Search never chooses a vector revision: the facade hands it the serving revision's embedder,
// store and scope through a VectorPort (SPEC §7: during a blue-green build the previous
// embedder embeds the query and only the previous revision's vectors are searched).
#pragma once

#include <string>

#include "catalog/catalog.h"
#include "core/filter.h"
#include "core/layout.h"
#include "quarry/types.h"
#include "search/vector.h"

namespace quarry::search {

// The vector side of one KB as the facade resolved it for this request.
struct ServingVectors {
  VectorSource source;
  bool has_embedder = false;  // an embedder is configured (or pinned), usable or not
  std::string unavailable;    // why it cannot answer now ("" when it can)
  bool blocked = false;       // because the SSRF guard refuses the embedder's endpoint
  bool usable() const { return source.provider && source.store && unavailable.empty(); }
};

// What search asks the facade about a KB's vectors, only when a mode needs them.
class VectorPort {
 public:
  virtual ~VectorPort() = default;
  virtual const ServingVectors& serving() = 0;
  // The vector index status (SPEC §1) of the KB's documents matching `filter`.
  virtual std::string status(const core::Filter& filter) = 0;
};

// One KB as a search sees it.
struct KbScope {
  const catalog::Catalog& cat;
  const core::Layout& layout;
  const catalog::KbRef& ref;  // resolved by the facade inside the search's read snapshot
  const KbConfig& config;
  VectorPort& vectors;
};

// Answers in the requested mode (kDefaultMode when none), or degrades hybrid/auto to keyword
// and says why in `degraded`. Fills index_status; the caller times the call.
SearchResponse search(const SearchRequest& r, const KbScope& kb);
// auto's hint to try grep for `query` (SearchResponse::hint), or "".
std::string grep_hint(const std::string& query);
GrepResponse grep(const GrepRequest& r, const KbScope& kb);

}  // namespace quarry::search
