// Pushing the §4 filter language into a remote store's own query language (chroma's `where`,
// qdrant's filter), once. The walk over the AST, the checks every leaf needs and the handling of
// empty and single-part lists are the same for every backend; a backend says only how its
// conditions look (a FilterDialect), and how it stores metadata so that those conditions can be
// exact (for_each_filterable() walks what a filter can reach).
//
// A translation must match core::filter_matches() exactly or refuse (mode_unavailable): a
// filter answered approximately would return documents the caller excluded.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/filter.h"

namespace quarry::store {

class FilterDialect {
 public:
  virtual ~FilterDialect() = default;

  // The (non-empty) filter as one backend condition. Throws Error(invalid_argument) for a leaf
  // without a value or an order comparison with a bool or null, Error(mode_unavailable) for an
  // order comparison with a string (`string_order` says why the backend cannot) and whatever
  // the dialect's builders refuse.
  nlohmann::json translate(const core::Filter& f) const;

  // AND / OR of conditions: no part is always true / always false, one part stands alone.
  nlohmann::json all_of(std::vector<nlohmann::json> parts) const;
  nlohmann::json any_of(std::vector<nlohmann::json> parts) const;

 protected:
  // `store` names the store in errors; `and_key`/`or_key` wrap a list of conditions
  // ({"$and": [...]}); `string_order` ends the refusal of a string order comparison, e.g.
  // "Chroma orders numbers only".
  FilterDialect(std::string store, std::string and_key, std::string or_key,
                std::string string_order);

  virtual nlohmann::json tautology() const = 0;  // a condition every record meets
  virtual nlohmann::json contradiction() const = 0;

  // The leaves, called with the checks done: `v` is the comparison's one value (order ones get
  // a number), `values` the $in/$nin list (possibly empty).
  virtual nlohmann::json exists(const std::string& field, bool want) const = 0;
  virtual nlohmann::json equal(const std::string& field, const core::Scalar& v) const = 0;
  virtual nlohmann::json not_equal(const std::string& field, const core::Scalar& v) const = 0;
  virtual nlohmann::json order(const std::string& field, core::Filter::Op op,
                               const core::Scalar& v) const = 0;
  virtual nlohmann::json in(const std::string& field,
                            const std::vector<core::Scalar>& values) const = 0;
  virtual nlohmann::json not_in(const std::string& field,
                                const std::vector<core::Scalar>& values) const = 0;

 private:
  nlohmann::json leaf(const core::Filter& f) const;

  std::string store_, and_key_, or_key_, string_order_;
};

// A comparison value as JSON (null, bool, integer, double or string).
nlohmann::json value_json(const core::Scalar& v);
bool is_number(const core::Scalar& v);
// "gt", "gte", "lt", "lte" for the order operators.
const char* order_name(core::Filter::Op op);

// An $in/$nin list split by kind, for backends that want one kind per list or compare some
// kinds differently: the strings, integers, doubles and bools as JSON arrays in list order,
// whether null is among them, and every value but the strings in list order.
struct ValuesByKind {
  nlohmann::json strings = nlohmann::json::array();
  nlohmann::json ints = nlohmann::json::array();
  nlohmann::json doubles = nlohmann::json::array();
  nlohmann::json bools = nlohmann::json::array();
  bool has_null = false;
  std::vector<core::Scalar> non_strings;
};
ValuesByKind group_by_kind(const std::vector<core::Scalar>& values);

// Calls visit(path, value) for every key of the metadata object a filter field can name
// (segments of letters, digits, '_' and '-', joined by '.', at most kMaxFilterFieldLength
// characters), depth first in key order; an object comes before its members. Keys no filter
// can name are skipped with everything below them. Integers beyond int64 arrive as doubles, as
// the filter language reads them.
void for_each_filterable(
    const nlohmann::json& metadata,
    const std::function<void(const std::string& path, const nlohmann::json& value)>& visit);

}  // namespace quarry::store
