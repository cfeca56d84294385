// The metadata filter language of SPEC §4 as a plain syntax tree, for plugins (quarry/plugin.h)
// and applications. A vector store receives it in VectorQuery::filter and delete_where(), and
// either translates it into its backend's own query (pushdown) or evaluates it per document
// with filter_matches() below, the reference semantics every store is tested against.
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
#include <string_view>
#include <variant>
#include <vector>

namespace quarry {

// One value of a comparison. Integers and doubles compare numerically with each other; no
// other two kinds compare equal.
using FilterValue = std::variant<std::nullptr_t, bool, std::int64_t, double, std::string>;

struct Filter {
  enum class Op { And, Or, Eq, Ne, Gt, Gte, Lt, Lte, In, Nin, Exists };
  Op op = Op::And;
  std::string field;                // comparison ops: the metadata path, e.g. "info.team"
  std::vector<FilterValue> values;  // one value, or the list for In/Nin; Exists: one bool
  std::vector<Filter> children;     // And/Or

  // The empty filter (an And of nothing) matches every document.
  bool empty() const { return op == Op::And && children.empty(); }
};

// Parses the JSON text of a filter ("" and "{}" give the empty filter). Throws
// quarry::Error(invalid_argument) naming the offending part.
Filter parse_filter(std::string_view json_text);

// The reference semantics over one document's metadata, given as the JSON text of an object
// (DocumentVectors::metadata_json; "" counts as {}). Comparisons only match values of the same
// kind (numbers with numbers, strings with strings); a missing field matches only $ne, $nin and
// $exists: false. Throws quarry::Error(invalid_argument) when the text is not a JSON object.
// It parses the text on every call: a brute-force store that filters often keeps its parsed
// documents instead (or calls it once per document and query, as examples/ does).
bool filter_matches(const Filter& filter, std::string_view metadata_json);

}  // namespace quarry
