// The pure half of the chroma store: settings, names, ids, metadata flattening and the filter
// translation. No I/O here, so all of it is unit-tested without a server
// (tests/store/chroma_mapping_test.cpp).
//
// Filter semantics were checked against Chroma 1.0 (the Rust core): `$ne` and `$nin` match
// records that lack the key or hold another type; `$eq`/`$in`/order operators compare ints and
// floats numerically and never match bools or strings; `$in`/`$nin` need a non-empty list of
// one type; order operators refuse strings. That is filter_matches() exactly, once nulls and
// presence get marker keys and mixed lists are split by type.
#include <cctype>
#include <climits>
#include <variant>

#include "core/util.h"
#include "quarry/error.h"
#include "store/chroma/chroma_store.h"
#include "store/remote_call.h"
#include "store/settings_reader.h"

namespace quarry::store::chroma {
using nlohmann::json;

namespace {

const SettingsReader kSettings("chroma");

void flatten_into(const json& obj, const std::string& prefix, json& out) {
  for (const auto& [k, v] : obj.items()) {
    if (!filter_reachable_segment(k)) continue;
    std::string path = prefix.empty() ? k : prefix + "." + k;
    if (path.size() > kMaxFilterFieldLength) continue;
    out[kHasPrefix + path] = true;
    if (v.is_object()) {
      flatten_into(v, path, out);
    } else if (v.is_null()) {
      out[kNullPrefix + path] = true;
    } else if (v.is_boolean() || v.is_string()) {
      out[path] = v;
    } else if (v.is_number_unsigned() &&
               v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      out[path] = v.get<double>();  // as core::to_scalar() does: beyond int64 is a double
    } else if (v.is_number_integer()) {
      out[path] = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
      out[path] = v.get<double>();
    }
    // Arrays: presence only. filter_matches() compares no scalar equal to an array, so only
    // $ne / $nin / $exists can match one, and those hold for a key Chroma does not have.
  }
}

json tautology() {
  return {{kIndexKey, {{"$gte", 0}}}};
}
json contradiction() {
  return {{kIndexKey, {{"$lt", 0}}}};
}

json all_of(std::vector<json> parts) {
  if (parts.empty()) return tautology();
  if (parts.size() == 1) return std::move(parts.front());
  return {{"$and", std::move(parts)}};
}

json any_of(std::vector<json> parts) {
  if (parts.empty()) return contradiction();
  if (parts.size() == 1) return std::move(parts.front());
  return {{"$or", std::move(parts)}};
}

json scalar_json(const core::Scalar& s) {
  return std::visit(
      [](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>)
          return nullptr;
        else
          return v;
      },
      s);
}

json cond(const std::string& key, const char* op, json value) {
  return {{key, {{op, std::move(value)}}}};
}

// Chroma wants one type per $in/$nin list: split the values into strings, ints, floats and
// bools (nulls go to the null marker).
struct Groups {
  std::vector<json> lists;  // each a homogeneous, non-empty array
  bool has_null = false;
};

Groups group_by_type(const std::vector<core::Scalar>& values) {
  json strs = json::array(), ints = json::array(), floats = json::array(), bools = json::array();
  Groups g;
  for (const auto& s : values) {
    if (std::holds_alternative<std::nullptr_t>(s))
      g.has_null = true;
    else if (std::holds_alternative<std::string>(s))
      strs.push_back(std::get<std::string>(s));
    else if (std::holds_alternative<std::int64_t>(s))
      ints.push_back(std::get<std::int64_t>(s));
    else if (std::holds_alternative<double>(s))
      floats.push_back(std::get<double>(s));
    else
      bools.push_back(std::get<bool>(s));
  }
  for (json* l : {&strs, &ints, &floats, &bools})
    if (!l->empty()) g.lists.push_back(std::move(*l));
  return g;
}

const char* order_op(core::Filter::Op op) {
  switch (op) {
    case core::Filter::Op::Gt:
      return "$gt";
    case core::Filter::Op::Gte:
      return "$gte";
    case core::Filter::Op::Lt:
      return "$lt";
    default:
      return "$lte";
  }
}

json translate_leaf(const core::Filter& f) {
  using Op = core::Filter::Op;
  if (f.values.empty() && f.op != Op::In && f.op != Op::Nin)
    throw Error(Code::invalid_argument, "filter on '" + f.field + "' has no value",
                {{"field", "filter"}});
  const std::string null_key = kNullPrefix + f.field;
  switch (f.op) {
    case Op::Exists: {
      const bool want = std::holds_alternative<bool>(f.values[0]) && std::get<bool>(f.values[0]);
      return cond(kHasPrefix + f.field, want ? "$eq" : "$ne", true);
    }
    case Op::Eq:
      if (std::holds_alternative<std::nullptr_t>(f.values[0])) return cond(null_key, "$eq", true);
      return cond(f.field, "$eq", scalar_json(f.values[0]));
    case Op::Ne:
      if (std::holds_alternative<std::nullptr_t>(f.values[0])) return cond(null_key, "$ne", true);
      return cond(f.field, "$ne", scalar_json(f.values[0]));
    case Op::Gt:
    case Op::Gte:
    case Op::Lt:
    case Op::Lte: {
      const auto& v = f.values[0];
      if (std::holds_alternative<std::string>(v))
        throw Error(Code::mode_unavailable,
                    "the chroma store cannot compare '" + f.field +
                        "' with a string by order (Chroma orders numbers only); use $eq/$in, "
                        "or a store with full filter support (embedded, pgvector)",
                    {{"store", "chroma"}, {"field", f.field}});
      if (!std::holds_alternative<std::int64_t>(v) && !std::holds_alternative<double>(v))
        throw Error(Code::invalid_argument,
                    "filter on '" + f.field + "': order comparisons need a number",
                    {{"field", "filter"}});
      return cond(f.field, order_op(f.op), scalar_json(v));
    }
    case Op::In: {
      Groups g = group_by_type(f.values);
      std::vector<json> parts;
      for (auto& l : g.lists) parts.push_back(cond(f.field, "$in", std::move(l)));
      if (g.has_null) parts.push_back(cond(null_key, "$eq", true));
      return any_of(std::move(parts));
    }
    case Op::Nin: {
      Groups g = group_by_type(f.values);
      std::vector<json> parts;
      for (auto& l : g.lists) parts.push_back(cond(f.field, "$nin", std::move(l)));
      if (g.has_null) parts.push_back(cond(null_key, "$ne", true));
      return all_of(std::move(parts));
    }
    default:
      throw Error(Code::internal, "unexpected filter operator");
  }
}

json translate_node(const core::Filter& f) {
  using Op = core::Filter::Op;
  if (f.op == Op::And || f.op == Op::Or) {
    std::vector<json> parts;
    for (const auto& c : f.children) parts.push_back(translate_node(c));
    return f.op == Op::And ? all_of(std::move(parts)) : any_of(std::move(parts));
  }
  return translate_leaf(f);
}

}  // namespace

ChromaSettings parse_chroma_settings(const json& settings) {
  ChromaSettings s;
  if (settings.is_null()) return s;
  if (!settings.is_object())
    throw Error(Code::invalid_argument, "chroma store settings must be a JSON object",
                {{"store", "chroma"}});
  for (const auto& [k, v] : settings.items()) {
    if (k == "url") {
      s.url = kSettings.string(v, k, false);
      while (!s.url.empty() && s.url.back() == '/') s.url.pop_back();
    } else if (k == "tenant") {
      s.tenant = kSettings.string(v, k, false);
    } else if (k == "database") {
      s.database = kSettings.string(v, k, false);
    } else if (k == "create_database") {
      s.create_database = kSettings.boolean(v, k);
    } else if (k == "allow_private") {
      s.allow_private = kSettings.boolean(v, k);
    } else if (k == "timeout_ms") {
      s.timeout_ms = kSettings.integer(v, k, 100, 3600000);
    } else if (k == "max_retries") {
      s.max_retries = kSettings.integer(v, k, 0, 20);
    } else if (k == "retry_base_delay_ms") {
      s.retry_base_delay_ms = kSettings.integer(v, k, 1, 600000);
    } else if (k == "retry_max_delay_ms") {
      s.retry_max_delay_ms = kSettings.integer(v, k, 1, 600000);
    } else if (k == "api_key_secret") {
      s.api_key_secret = kSettings.string(v, k, true);
    } else if (k == "batch_size") {
      s.batch_size = kSettings.integer(v, k, 0, 1000000);
    } else if (k == "ef_search") {
      s.ef_search = kSettings.integer(v, k, 1, 100000);
    } else if (k == "ef_construction") {
      s.ef_construction = kSettings.integer(v, k, 1, 100000);
    } else if (k == "max_neighbors") {
      s.max_neighbors = kSettings.integer(v, k, 2, 1000);
    } else {
      kSettings.bad(k,
                    "unknown (known: url, tenant, database, create_database, allow_private, "
                    "timeout_ms, max_retries, retry_base_delay_ms, retry_max_delay_ms, "
                    "api_key_secret, batch_size, ef_search, ef_construction, max_neighbors)");
    }
  }
  return s;
}

std::string collection_name(const std::string& kb, const std::string& revision) {
  std::string name = "quarry-" + name_slug(kb) + "-" + core::sha256_hex(kb).substr(0, 12) + "-" +
                     core::sha256_hex(kb + '\n' + revision).substr(0, 12);
  return name;
}

std::string record_id(const std::string& doc_id, int chunk_index) {
  return doc_id + "#" + std::to_string(chunk_index);
}

json flatten_metadata(const json& metadata) {
  json out = json::object();
  if (metadata.is_object()) flatten_into(metadata, "", out);
  return out;
}

json translate_filter(const core::Filter& filter) {
  if (filter.empty()) return json::object();
  return translate_node(filter);
}

}  // namespace quarry::store::chroma
