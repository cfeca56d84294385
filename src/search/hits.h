// Building public hits from catalog rows, shared by every ranked mode.
#pragma once

#include <string>

#include "catalog/catalog.h"
#include "quarry/types.h"

namespace quarry::search {

// Moves the row's document and chunk fields into a Hit (text stays in the row for snippets).
Hit make_hit(catalog::KeywordRow& r, double score, double raw_score, const std::string& metric);

}  // namespace quarry::search
