#include "core/filter.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/util.h"
#include "quarry/error.h"

namespace quarry::core {
using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& msg) {
  throw Error(Code::invalid_argument, "invalid filter: " + msg, {{"field", "filter"}});
}

// A filter's size: each comparison value (every value of an $in or $nin list, $exists too) and
// each $and/$or counts one. Evaluation is linear in it (per document), so this bounds the work
// one filter can ask for per document.
constexpr std::size_t kMaxFilterTerms = 20000;

void count_terms(std::size_t* terms, std::size_t n) {
  *terms += n;
  if (*terms > kMaxFilterTerms)
    bad("too large: at most " + std::to_string(kMaxFilterTerms) +
        " conditions and values in one filter (each value of an $in or $nin list counts); "
        "split the request or use fewer values");
}

bool valid_field(const std::string& f) {
  if (f.empty() || f.size() > 128) return false;
  for (char c : f)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return f.front() != '.' && f.back() != '.' && f.find("..") == std::string::npos;
}

Scalar to_scalar(const json& v, const std::string& where) {
  if (v.is_null()) return nullptr;
  if (v.is_boolean()) return v.get<bool>();
  // Integers beyond int64 (nlohmann keeps them as uint64) would wrap: keep them as doubles.
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    return v.get<double>();
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  bad(where + ": values must be strings, numbers, booleans or null");
}

Filter leaf(Filter::Op op, const std::string& field, std::vector<Scalar> values) {
  Filter f;
  f.op = op;
  f.field = field;
  f.values = std::move(values);
  return f;
}

Filter parse_field(const std::string& field, const json& cond, std::size_t* terms) {
  if (!valid_field(field))
    bad("'" + field + "' is not a valid field name (letters, digits, '_', '-', '.')");
  if (!cond.is_object()) {
    count_terms(terms, 1);
    return leaf(Filter::Op::Eq, field, {to_scalar(cond, field)});
  }
  if (cond.empty()) bad(field + ": empty condition object");
  static const std::pair<const char*, Filter::Op> kOps[] = {
      {"$eq", Filter::Op::Eq},   {"$ne", Filter::Op::Ne},   {"$gt", Filter::Op::Gt},
      {"$gte", Filter::Op::Gte}, {"$lt", Filter::Op::Lt},   {"$lte", Filter::Op::Lte},
      {"$in", Filter::Op::In},   {"$nin", Filter::Op::Nin}, {"$exists", Filter::Op::Exists}};
  Filter all;
  for (const auto& [k, v] : cond.items()) {
    const Filter::Op* op = nullptr;
    for (const auto& [name, o] : kOps)
      if (k == name) op = &o;
    if (!op)
      bad(field + ": unknown operator '" + k +
          "' (known: $eq $ne $gt $gte $lt $lte $in $nin $exists)");
    if (*op == Filter::Op::In || *op == Filter::Op::Nin) {
      if (!v.is_array()) bad(field + "." + k + ": expects an array");
      if (v.size() > 1000) bad(field + "." + k + ": at most 1000 values");
      count_terms(terms, std::max<std::size_t>(v.size(), 1));
      std::vector<Scalar> vals;
      for (const auto& e : v) vals.push_back(to_scalar(e, field + "." + k));
      all.children.push_back(leaf(*op, field, std::move(vals)));
    } else if (*op == Filter::Op::Exists) {
      if (!v.is_boolean()) bad(field + ".$exists: expects true or false");
      count_terms(terms, 1);
      all.children.push_back(leaf(*op, field, {v.get<bool>()}));
    } else {
      if (v.is_array() || v.is_object()) bad(field + "." + k + ": expects a single value");
      count_terms(terms, 1);
      if (*op != Filter::Op::Eq && *op != Filter::Op::Ne && !v.is_number() && !v.is_string())
        bad(field + "." + k + ": range comparisons need a number or a string");
      all.children.push_back(leaf(*op, field, {to_scalar(v, field + "." + k)}));
    }
  }
  if (all.children.size() == 1) return std::move(all.children.front());
  return all;
}

Filter parse_node(const json& j, int depth, std::size_t* terms) {
  if (depth > 32) bad("nested too deeply (max 32 levels)");
  if (!j.is_object()) bad("a filter is a JSON object");
  Filter all;
  for (const auto& [k, v] : j.items()) {
    if (k == "$and" || k == "$or") {
      if (!v.is_array() || v.empty()) bad(k + " expects a non-empty array of filters");
      count_terms(terms, 1);
      Filter group;
      group.op = k == "$and" ? Filter::Op::And : Filter::Op::Or;
      for (const auto& e : v) group.children.push_back(parse_node(e, depth + 1, terms));
      all.children.push_back(std::move(group));
    } else if (!k.empty() && k[0] == '$') {
      bad("unknown top-level operator '" + k + "' (known: $and, $or)");
    } else {
      all.children.push_back(parse_field(k, v, terms));
    }
  }
  if (all.children.size() == 1) return std::move(all.children.front());
  return all;
}

const json* lookup(const json& obj, const std::string& field) {
  const json* cur = &obj;
  std::size_t start = 0;
  while (true) {
    if (!cur->is_object()) return nullptr;
    auto dot = field.find('.', start);
    auto it =
        cur->find(field.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (it == cur->end()) return nullptr;
    cur = &*it;
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

// Exact comparison of an integer with a double (no rounding of the integer to a double).
int int_double_compare(std::int64_t a, double b) {
  if (b >= 9223372036854775808.0) return -1;
  if (b < -9223372036854775808.0) return 1;
  double fb = std::floor(b);
  auto ib = static_cast<std::int64_t>(fb);
  if (a != ib) return a < ib ? -1 : 1;
  return fb < b ? -1 : 0;
}

// -1, 0, 1 for comparable kinds; 2 when the kinds differ.
int compare(const json& v, const Scalar& s) {
  if (std::holds_alternative<std::string>(s)) {
    if (!v.is_string()) return 2;
    const auto& a = v.get_ref<const std::string&>();
    const auto& b = std::get<std::string>(s);
    return a < b ? -1 : (a > b ? 1 : 0);
  }
  if (std::holds_alternative<std::int64_t>(s) || std::holds_alternative<double>(s)) {
    if (!v.is_number() || v.is_boolean()) return 2;
    // Integers compare exactly (ids beyond 2^53 must not collide), as SQLite compares them.
    const bool a_int =
        v.is_number_integer() && (!v.is_number_unsigned() ||
                                  v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX));
    if (a_int && std::holds_alternative<std::int64_t>(s)) {
      std::int64_t a = v.get<std::int64_t>(), b = std::get<std::int64_t>(s);
      return a < b ? -1 : (a > b ? 1 : 0);
    }
    if (a_int) return int_double_compare(v.get<std::int64_t>(), std::get<double>(s));
    double a = v.get<double>();
    if (std::holds_alternative<std::int64_t>(s))
      return -int_double_compare(std::get<std::int64_t>(s), a);
    double b = std::get<double>(s);
    return a < b ? -1 : (a > b ? 1 : 0);
  }
  if (std::holds_alternative<bool>(s)) {
    if (!v.is_boolean()) return 2;
    return v.get<bool>() == std::get<bool>(s) ? 0 : 1;
  }
  return v.is_null() ? 0 : 2;
}

}  // namespace

Filter parse_filter(const json& j) {
  if (j.is_null()) return {};
  if (j.is_object() && j.empty()) return {};
  std::size_t terms = 0;
  return parse_node(j, 0, &terms);
}

Filter parse_filter_text(const std::string& text) {
  if (text.empty()) return {};
  // Logical nesting is bounded at 32 below; this bounds the JSON itself (arrays in values too).
  if (!core::json_nesting_within(text, 128)) bad("nests deeper than 128 JSON levels");
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) bad("not valid JSON");
  return parse_filter(j);
}

bool filter_matches(const Filter& f, const json& md) {
  using Op = Filter::Op;
  switch (f.op) {
    case Op::And:
      for (const auto& c : f.children)
        if (!filter_matches(c, md)) return false;
      return true;
    case Op::Or:
      for (const auto& c : f.children)
        if (filter_matches(c, md)) return true;
      return false;
    default:
      break;
  }
  const json* v = lookup(md, f.field);
  switch (f.op) {
    case Op::Exists:
      return (v != nullptr) == std::get<bool>(f.values[0]);
    case Op::Eq:
      return v && compare(*v, f.values[0]) == 0;
    case Op::Ne:
      return !v || compare(*v, f.values[0]) != 0;
    case Op::Gt:
      return v && compare(*v, f.values[0]) == 1;
    case Op::Gte: {
      if (!v) return false;
      int c = compare(*v, f.values[0]);
      return c == 0 || c == 1;
    }
    case Op::Lt:
      return v && compare(*v, f.values[0]) == -1;
    case Op::Lte: {
      if (!v) return false;
      int c = compare(*v, f.values[0]);
      return c == 0 || c == -1;
    }
    case Op::In:
      if (!v) return false;
      for (const auto& s : f.values)
        if (compare(*v, s) == 0) return true;
      return false;
    case Op::Nin:
      if (!v) return true;
      for (const auto& s : f.values)
        if (compare(*v, s) == 0) return false;
      return true;
    default:
      return false;
  }
}

}  // namespace quarry::core

// The public entry points (quarry/filter.h): JSON text in, the same semantics.
namespace quarry {

Filter parse_filter(std::string_view json_text) {
  return core::parse_filter_text(std::string(json_text));
}

bool filter_matches(const Filter& filter, std::string_view metadata_json) {
  if (metadata_json.empty()) return core::filter_matches(filter, nlohmann::json::object());
  auto md = nlohmann::json::parse(metadata_json, nullptr, false);
  if (md.is_discarded() || !md.is_object())
    throw Error(Code::invalid_argument,
                "document metadata must be the JSON text of an object, e.g. {\"lang\": \"en\"}",
                {{"field", "metadata"}});
  return core::filter_matches(filter, md);
}

}  // namespace quarry
