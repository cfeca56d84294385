// The metadata filter language of SPEC §4, parsed into an AST once and then either compiled to
// a store's native query (SQL in the catalog) or evaluated directly (the reference semantics
// that pushdown implementations are tested against).
//
//   {"lang": "en"}                          equality
//   {"year": {"$gte": 2020, "$lt": 2024}}   comparison ($eq $ne $gt $gte $lt $lte)
//   {"tag": {"$in": ["a", "b"]}}            membership ($in $nin)
//   {"author": {"$exists": true}}           presence
//   {"$or": [{...}, {...}]}, {"$and": [...]} boolean combination
// Several keys in one object are AND-ed. Field names are metadata keys; `a.b` reaches nested
// objects.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace quarry::core {

using Scalar = std::variant<std::nullptr_t, bool, std::int64_t, double, std::string>;

struct Filter {
  enum class Op { And, Or, Eq, Ne, Gt, Gte, Lt, Lte, In, Nin, Exists };
  Op op = Op::And;
  std::string field;             // comparison ops
  std::vector<Scalar> values;    // one value, or the list for In/Nin; Exists: bool
  std::vector<Filter> children;  // And/Or

  bool empty() const { return op == Op::And && children.empty(); }
};

// Throws Error(invalid_argument) naming the offending part.
Filter parse_filter(const nlohmann::json& j);
Filter parse_filter_text(const std::string& text);  // "" -> empty filter

// Reference semantics over a metadata object. Comparisons only match values of the same kind
// (numbers with numbers, strings with strings); a missing field matches only $ne, $nin and
// $exists: false.
bool filter_matches(const Filter& f, const nlohmann::json& metadata);

}  // namespace quarry::core
