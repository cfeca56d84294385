// The metadata filter language of SPEC §4 (quarry/filter.h: the public syntax tree) with the
// internal entry points that take nlohmann::json: parsed into an AST once, then either compiled
// to a store's native query (SQL in the catalog) or evaluated directly (the reference semantics
// that pushdown implementations are tested against).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "quarry/filter.h"

namespace quarry::core {

// The public AST under the names the catalog and search code use.
using Scalar = quarry::FilterValue;
using Filter = quarry::Filter;

// Throws Error(invalid_argument) naming the offending part.
Filter parse_filter(const nlohmann::json& j);
Filter parse_filter_text(const std::string& text);  // "" -> empty filter

// Reference semantics over a metadata object. Comparisons only match values of the same kind
// (numbers with numbers, strings with strings); a missing field matches only $ne, $nin and
// $exists: false.
bool filter_matches(const Filter& f, const nlohmann::json& metadata);

}  // namespace quarry::core
