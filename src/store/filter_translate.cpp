// The shared walk of filter_translate.h. What differs between backends is only the shape of a
// condition; what every one of them must get right the same way lives here: which leaves are
// malformed, which comparisons no backend orders, and the constants an empty list stands for.
#include "store/filter_translate.h"

#include <climits>
#include <variant>

#include "quarry/error.h"
#include "store/settings_reader.h"

namespace quarry::store {
using nlohmann::json;

FilterDialect::FilterDialect(std::string store, std::string and_key, std::string or_key,
                             std::string string_order)
    : store_(std::move(store)),
      and_key_(std::move(and_key)),
      or_key_(std::move(or_key)),
      string_order_(std::move(string_order)) {}

json FilterDialect::all_of(std::vector<json> parts) const {
  if (parts.empty()) return tautology();
  if (parts.size() == 1) return std::move(parts.front());
  return {{and_key_, std::move(parts)}};
}

json FilterDialect::any_of(std::vector<json> parts) const {
  if (parts.empty()) return contradiction();
  if (parts.size() == 1) return std::move(parts.front());
  return {{or_key_, std::move(parts)}};
}

json FilterDialect::translate(const core::Filter& f) const {
  using Op = core::Filter::Op;
  if (f.op == Op::And || f.op == Op::Or) {
    std::vector<json> parts;
    for (const auto& c : f.children) parts.push_back(translate(c));
    return f.op == Op::And ? all_of(std::move(parts)) : any_of(std::move(parts));
  }
  return leaf(f);
}

json FilterDialect::leaf(const core::Filter& f) const {
  using Op = core::Filter::Op;
  if (f.values.empty() && f.op != Op::In && f.op != Op::Nin)
    throw Error(Code::invalid_argument, "filter on '" + f.field + "' has no value",
                {{"field", "filter"}});
  switch (f.op) {
    case Op::Exists:
      return exists(f.field,
                    std::holds_alternative<bool>(f.values[0]) && std::get<bool>(f.values[0]));
    case Op::Eq:
      return equal(f.field, f.values[0]);
    case Op::Ne:
      return not_equal(f.field, f.values[0]);
    case Op::Gt:
    case Op::Gte:
    case Op::Lt:
    case Op::Lte: {
      const auto& v = f.values[0];
      if (std::holds_alternative<std::string>(v))
        throw Error(Code::mode_unavailable,
                    "the " + store_ + " store cannot compare '" + f.field +
                        "' with a string by order (" + string_order_ +
                        "); use $eq/$in, or a store with full filter support (embedded, "
                        "pgvector)",
                    {{"store", store_}, {"field", f.field}});
      if (!is_number(v))
        throw Error(Code::invalid_argument,
                    "filter on '" + f.field + "': order comparisons need a number",
                    {{"field", "filter"}});
      return order(f.field, f.op, v);
    }
    case Op::In:
      return in(f.field, f.values);
    case Op::Nin:
      return not_in(f.field, f.values);
    default:
      throw Error(Code::internal, "unexpected filter operator");
  }
}

json value_json(const core::Scalar& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>)
          return nullptr;
        else
          return x;
      },
      v);
}

bool is_number(const core::Scalar& v) {
  return std::holds_alternative<std::int64_t>(v) || std::holds_alternative<double>(v);
}

const char* order_name(core::Filter::Op op) {
  switch (op) {
    case core::Filter::Op::Gt:
      return "gt";
    case core::Filter::Op::Gte:
      return "gte";
    case core::Filter::Op::Lt:
      return "lt";
    default:
      return "lte";
  }
}

ValuesByKind group_by_kind(const std::vector<core::Scalar>& values) {
  ValuesByKind g;
  for (const auto& v : values) {
    if (std::holds_alternative<std::string>(v)) {
      g.strings.push_back(std::get<std::string>(v));
      continue;
    }
    g.non_strings.push_back(v);
    if (std::holds_alternative<std::nullptr_t>(v))
      g.has_null = true;
    else if (std::holds_alternative<std::int64_t>(v))
      g.ints.push_back(std::get<std::int64_t>(v));
    else if (std::holds_alternative<double>(v))
      g.doubles.push_back(std::get<double>(v));
    else
      g.bools.push_back(std::get<bool>(v));
  }
  return g;
}

namespace {

void walk(const json& obj, const std::string& prefix,
          const std::function<void(const std::string&, const json&)>& visit) {
  for (const auto& [k, v] : obj.items()) {
    if (!filter_reachable_segment(k)) continue;
    std::string path = prefix.empty() ? k : prefix + "." + k;
    if (path.size() > kMaxFilterFieldLength) continue;
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      visit(path, json(v.get<double>()));  // as core::to_scalar() reads it: beyond int64
      continue;
    }
    visit(path, v);
    if (v.is_object()) walk(v, path, visit);
  }
}

}  // namespace

void for_each_filterable(const json& metadata,
                         const std::function<void(const std::string&, const json&)>& visit) {
  if (metadata.is_object()) walk(metadata, "", visit);
}

}  // namespace quarry::store
