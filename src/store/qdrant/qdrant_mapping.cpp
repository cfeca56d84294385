// The pure half of the qdrant store: settings, names, point ids, payload and the filter
// translation. No I/O here, so all of it is unit-tested without a server
// (tests/store/qdrant_mapping_test.cpp).
//
// Qdrant's filter language, as documented at https://qdrant.tech/documentation/concepts/filtering/
// (checked for v1.9 to v1.19):
//   a filter is {"must": [..], "should": [..], "must_not": [..]} (AND, OR, NOR), and a filter
//   may itself stand as a condition; a field condition is {"key": path, "match": {"value": v}}
//   (v a string, integer or bool), {"key", "match": {"any": [..]}} (strings or integers),
//   {"key", "range": {"gt", "gte", "lt", "lte"}} (numbers, compared as doubles), and
//   {"is_null": {"key"}} (the field exists and is null). A path with dots reaches nested
//   objects; an array at any step matches if any element does.
// How each Quarry operator maps, and why it is exact, is in translate_leaf().
#include <cctype>
#include <climits>
#include <cmath>
#include <variant>

#include "core/util.h"
#include "quarry/error.h"
#include "store/qdrant/qdrant_store.h"
#include "store/remote_call.h"
#include "store/settings_reader.h"

namespace quarry::store::qdrant {
using nlohmann::json;

namespace {

const SettingsReader kSettings("qdrant");

json sanitize(const json& obj, const std::string& prefix, json* paths) {
  json out = json::object();
  for (const auto& [k, v] : obj.items()) {
    if (!filter_reachable_segment(k)) continue;
    std::string path = prefix.empty() ? k : prefix + "." + k;
    if (path.size() > kMaxFilterFieldLength) continue;
    if (paths) paths->push_back(path);
    if (v.is_object()) {
      out[k] = sanitize(v, path, paths);
    } else if (v.is_number_unsigned() &&
               v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      out[k] = v.get<double>();
    } else if (!v.is_array()) {
      out[k] = v;  // string, number, bool, null
    }
  }
  return out;
}

std::string field(const std::string& f) {
  return std::string(kMetaKey) + "." + f;
}

// Always true / always false: every point has quarry_chunk >= 0.
json tautology() {
  return {{"key", kIndexKey}, {"range", {{"gte", 0}}}};
}
json contradiction() {
  return {{"key", kIndexKey}, {"range", {{"lt", 0}}}};
}

json all_of(std::vector<json> parts) {
  if (parts.empty()) return tautology();
  if (parts.size() == 1) return std::move(parts.front());
  return {{"must", std::move(parts)}};
}
json any_of(std::vector<json> parts) {
  if (parts.empty()) return contradiction();
  if (parts.size() == 1) return std::move(parts.front());
  return {{"should", std::move(parts)}};
}
json none_of(std::vector<json> parts) {
  if (parts.empty()) return tautology();
  return {{"must_not", std::move(parts)}};
}

// 2^53: below it every integer is a double exactly, so Qdrant's double comparison agrees with
// Quarry's exact one (a stored integer beyond it rounds to a double of magnitude >= 2^53, still
// on the same side of the filter's value, never equal to it).
constexpr double kExactLimit = 9007199254740992.0;

double number_of(const core::Scalar& s, const std::string& f) {
  double d = std::holds_alternative<std::int64_t>(s)
                 ? static_cast<double>(std::get<std::int64_t>(s))
                 : std::get<double>(s);
  if (!(std::fabs(d) < kExactLimit))
    throw Error(Code::mode_unavailable,
                "the qdrant store cannot compare '" + f +
                    "' with a number of magnitude 2^53 or more exactly (Qdrant compares numbers "
                    "as doubles); use a smaller number, a string, or the embedded or pgvector "
                    "store",
                {{"store", "qdrant"}, {"field", f}});
  return d;
}

json number_json(const core::Scalar& s, const std::string& f) {
  number_of(s, f);
  if (std::holds_alternative<std::int64_t>(s)) return std::get<std::int64_t>(s);
  return std::get<double>(s);
}

bool is_number(const core::Scalar& s) {
  return std::holds_alternative<std::int64_t>(s) || std::holds_alternative<double>(s);
}

// One value equal to the field, in Quarry's sense (compare() == 0):
//   string, bool -> match value (Qdrant compares them exactly and never across types);
//   number       -> range gte = lte = v (match value would miss 1.0 for 1: Qdrant matches an
//                   integer only against integers, Quarry compares numerically);
//   null         -> is_null (match cannot test null).
json equal_to(const std::string& f, const core::Scalar& s) {
  if (std::holds_alternative<std::nullptr_t>(s)) return {{"is_null", {{"key", field(f)}}}};
  if (is_number(s)) {
    json v = number_json(s, f);
    return {{"key", field(f)}, {"range", {{"gte", v}, {"lte", v}}}};
  }
  json v =
      std::holds_alternative<bool>(s) ? json(std::get<bool>(s)) : json(std::get<std::string>(s));
  return {{"key", field(f)}, {"match", {{"value", std::move(v)}}}};
}

// Equal to any of the values: strings in one match any, the rest one condition each.
std::vector<json> equal_to_any(const std::string& f, const std::vector<core::Scalar>& values) {
  std::vector<json> parts;
  json strings = json::array();
  for (const auto& s : values) {
    if (std::holds_alternative<std::string>(s))
      strings.push_back(std::get<std::string>(s));
    else
      parts.push_back(equal_to(f, s));
  }
  if (strings.size() == 1)
    parts.insert(parts.begin(), json{{"key", field(f)}, {"match", {{"value", strings[0]}}}});
  else if (!strings.empty())
    parts.insert(parts.begin(), json{{"key", field(f)}, {"match", {{"any", std::move(strings)}}}});
  return parts;
}

const char* order_op(core::Filter::Op op) {
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

json translate_leaf(const core::Filter& f) {
  using Op = core::Filter::Op;
  if (f.values.empty() && f.op != Op::In && f.op != Op::Nin)
    throw Error(Code::invalid_argument, "filter on '" + f.field + "' has no value",
                {{"field", "filter"}});
  switch (f.op) {
    case Op::Exists: {  // presence list: is_empty would also hold for null and [] values
      const bool want = std::holds_alternative<bool>(f.values[0]) && std::get<bool>(f.values[0]);
      json present = {{"key", kHasKey}, {"match", {{"value", f.field}}}};
      return want ? present : none_of({std::move(present)});
    }
    case Op::Eq:
      return equal_to(f.field, f.values[0]);
    case Op::Ne:  // must_not also holds for a missing field or another type, as $ne does
      return none_of({equal_to(f.field, f.values[0])});
    case Op::Gt:
    case Op::Gte:
    case Op::Lt:
    case Op::Lte: {
      const auto& v = f.values[0];
      if (std::holds_alternative<std::string>(v))
        throw Error(Code::mode_unavailable,
                    "the qdrant store cannot compare '" + f.field +
                        "' with a string by order (Qdrant's range compares numbers only); use "
                        "$eq/$in, or a store with full filter support (embedded, pgvector)",
                    {{"store", "qdrant"}, {"field", f.field}});
      if (!is_number(v))
        throw Error(Code::invalid_argument,
                    "filter on '" + f.field + "': order comparisons need a number",
                    {{"field", "filter"}});
      return {{"key", field(f.field)}, {"range", {{order_op(f.op), number_json(v, f.field)}}}};
    }
    case Op::In:
      return any_of(equal_to_any(f.field, f.values));
    case Op::Nin:  // not `match except`: Quarry's $nin holds for a missing field
      return none_of(equal_to_any(f.field, f.values));
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

bool valid_prefix(const std::string& p) {
  if (p.empty() || p.size() > 40) return false;
  for (char c : p)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

}  // namespace

QdrantSettings parse_qdrant_settings(const json& settings) {
  QdrantSettings s;
  if (settings.is_null()) return s;
  if (!settings.is_object())
    throw Error(Code::invalid_argument, "qdrant store settings must be a JSON object",
                {{"store", "qdrant"}});
  for (const auto& [k, v] : settings.items()) {
    if (k == "url") {
      s.url = kSettings.string(v, k, false);
      while (!s.url.empty() && s.url.back() == '/') s.url.pop_back();
    } else if (k == "tenancy") {
      s.tenancy = kSettings.string(v, k, false);
      if (s.tenancy != "namespace" && s.tenancy != "collection")
        kSettings.bad(k,
                      "expects \"namespace\" (a collection per revision, KBs told apart by the "
                      "payload) or \"collection\" (a collection per KB and revision)");
    } else if (k == "collection_prefix") {
      s.collection_prefix = kSettings.string(v, k, false);
      if (!valid_prefix(s.collection_prefix))
        kSettings.bad(k, "expects 1 to 40 characters of letters, digits, '_' and '-'");
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
      s.batch_size = kSettings.integer(v, k, 1, 100000);
    } else if (k == "exact") {
      s.exact = kSettings.boolean(v, k);
    } else if (k == "hnsw_ef") {
      s.hnsw_ef = kSettings.integer(v, k, 0, 100000);
    } else if (k == "hnsw_m") {
      s.hnsw_m = kSettings.integer(v, k, 0, 1000);
    } else if (k == "hnsw_ef_construct") {
      s.hnsw_ef_construct = kSettings.integer(v, k, 4, 100000);
    } else {
      kSettings.bad(k,
                    "unknown (known: url, tenancy, collection_prefix, allow_private, timeout_ms, "
                    "max_retries, retry_base_delay_ms, retry_max_delay_ms, api_key_secret, "
                    "batch_size, exact, hnsw_ef, hnsw_m, hnsw_ef_construct)");
    }
  }
  return s;
}

std::string collection_family(const QdrantSettings& s, const std::string& kb) {
  if (s.tenancy == "collection")
    return s.collection_prefix + "_kb_" + core::sha256_hex(kb).substr(0, 12) + "_";
  return s.collection_prefix + "_rev_";
}

std::string collection_name(const QdrantSettings& s, const std::string& kb,
                            const std::string& revision) {
  if (s.tenancy == "collection")
    return collection_family(s, kb) + core::sha256_hex(kb + '\n' + revision).substr(0, 12);
  return collection_family(s, kb) + name_slug(revision) + "_" +
         core::sha256_hex(revision).substr(0, 12);
}

std::string point_id(const std::string& kb, const std::string& doc_id, int chunk_index) {
  std::string key = kb;
  key += '\0';
  key += doc_id;
  key += '\0';
  key += std::to_string(chunk_index);
  std::string h = core::sha256_hex(key).substr(0, 32);
  h[12] = '8';  // version 8 (custom)
  static const char* variant = "89ab";
  h[16] = variant[std::stoi(h.substr(16, 1), nullptr, 16) & 3];  // variant 10xx
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

json payload_metadata(const json& metadata) {
  if (!metadata.is_object()) return json::object();
  return sanitize(metadata, "", nullptr);
}

json present_paths(const json& metadata) {
  json paths = json::array();
  if (metadata.is_object()) sanitize(metadata, "", &paths);
  return paths;
}

json translate_filter(const core::Filter& filter) {
  if (filter.empty()) return nullptr;
  return translate_node(filter);
}

json kb_condition(const std::string& kb) {
  return {{"key", kKbKey}, {"match", {{"value", kb}}}};
}

}  // namespace quarry::store::qdrant
