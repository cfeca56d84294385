// Hit completion: public hits from catalog rows, shared by every ranked mode.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "quarry/types.h"

namespace quarry::search {

// Moves the row's document and chunk fields into a Hit (text stays in the row for snippets).
Hit make_hit(catalog::KeywordRow& r, double score, double raw_score, const std::string& metric);

// Sets the hit's snippet, its text without the markers and the highlights (code points).
void set_snippet(Hit& h, catalog::Snippet s);

// Byte ranges of `text` ([begin, end), as grep reports them) in Unicode code points.
std::vector<std::pair<std::size_t, std::size_t>> code_point_ranges(
    const std::string& text, const std::vector<std::pair<std::size_t, std::size_t>>& bytes);

// Fills bare hits (those without a filename) from the catalog, keeping their scores; drops those
// whose chunk is gone or was re-chunked since (stale vectors) and sibling windows of a section
// already listed; cuts to top_k. Hits without a snippet get one highlighting the query's words
// (`advanced`: the query is FTS5 syntax). A bare hit whose chunk is in `done` (complete hits,
// e.g. another list of the same query) is copied from there instead of read again.
void complete_hits(const catalog::Catalog& cat, const catalog::KbRef& kb, const std::string& query,
                   std::vector<Hit>& hits, int top_k, bool advanced = false,
                   const std::vector<Hit>* done = nullptr);

}  // namespace quarry::search
