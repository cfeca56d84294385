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
// How each Quarry operator maps, and why it is exact, is said in QdrantDialect below.
#include <cctype>
#include <cmath>
#include <variant>

#include "core/plugin_version.h"
#include "core/util.h"
#include "quarry/error.h"
#include "store/filter_translate.h"
#include "store/qdrant/qdrant_store.h"
#include "store/remote_call.h"
#include "store/settings_reader.h"

namespace quarry::store::qdrant {
using nlohmann::json;

namespace {

const SettingsReader kSettings("qdrant");

std::string field(const std::string& f) {
  return std::string(kMetaKey) + "." + f;
}

// 2^53: below it every integer is a double exactly, so Qdrant's double comparison agrees with
// Quarry's exact one (a stored integer beyond it rounds to a double of magnitude >= 2^53, still
// on the same side of the filter's value, never equal to it).
constexpr double kExactLimit = 9007199254740992.0;

json number_json(const core::Scalar& s, const std::string& f) {
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
  return value_json(s);
}

// Qdrant's filter: field conditions under must / should / must_not. How each operator maps, and
// why it is exact, is said at each builder.
class QdrantDialect final : public FilterDialect {
 public:
  QdrantDialect()
      : FilterDialect("qdrant", "must", "should", "Qdrant's range compares numbers only") {}

  json none_of(std::vector<json> parts) const {
    if (parts.empty()) return tautology();
    return {{"must_not", std::move(parts)}};
  }

 protected:
  // Every point has quarry_chunk >= 0.
  json tautology() const override { return {{"key", kIndexKey}, {"range", {{"gte", 0}}}}; }
  json contradiction() const override { return {{"key", kIndexKey}, {"range", {{"lt", 0}}}}; }

  // The presence list: is_empty would also hold for null and [] values.
  json exists(const std::string& f, bool want) const override {
    json present = {{"key", kHasKey}, {"match", {{"value", f}}}};
    return want ? present : none_of({std::move(present)});
  }

  // One value equal to the field, in Quarry's sense (compare() == 0):
  //   string, bool -> match value (Qdrant compares them exactly and never across types);
  //   number       -> range gte = lte = v (match value would miss 1.0 for 1: Qdrant matches an
  //                   integer only against integers, Quarry compares numerically);
  //   null         -> is_null (match cannot test null).
  json equal(const std::string& f, const core::Scalar& s) const override {
    if (std::holds_alternative<std::nullptr_t>(s)) return {{"is_null", {{"key", field(f)}}}};
    if (is_number(s)) {
      json v = number_json(s, f);
      return {{"key", field(f)}, {"range", {{"gte", v}, {"lte", v}}}};
    }
    return {{"key", field(f)}, {"match", {{"value", value_json(s)}}}};
  }
  // must_not also holds for a missing field or another type, as $ne does.
  json not_equal(const std::string& f, const core::Scalar& s) const override {
    return none_of({equal(f, s)});
  }
  json order(const std::string& f, core::Filter::Op op, const core::Scalar& v) const override {
    return {{"key", field(f)}, {"range", {{order_name(op), number_json(v, f)}}}};
  }
  json in(const std::string& f, const std::vector<core::Scalar>& values) const override {
    return any_of(equal_to_any(f, values));
  }
  // Not `match except`: Quarry's $nin holds for a missing field.
  json not_in(const std::string& f, const std::vector<core::Scalar>& values) const override {
    return none_of(equal_to_any(f, values));
  }

 private:
  // Equal to any of the values: strings in one match any, the rest one condition each.
  std::vector<json> equal_to_any(const std::string& f,
                                 const std::vector<core::Scalar>& values) const {
    ValuesByKind g = group_by_kind(values);
    std::vector<json> parts;
    if (g.strings.size() == 1)
      parts.push_back({{"key", field(f)}, {"match", {{"value", g.strings[0]}}}});
    else if (!g.strings.empty())
      parts.push_back({{"key", field(f)}, {"match", {{"any", std::move(g.strings)}}}});
    for (const auto& s : g.non_strings) parts.push_back(equal(f, s));
    return parts;
  }
};

const QdrantDialect kDialect;

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
    if (kSettings.remote(s, k, v)) continue;  // url, allow_private, timeouts, retries, key
    if (k == "tenancy") {
      s.tenancy = kSettings.string(v, k, false);
      if (s.tenancy != "namespace" && s.tenancy != "collection")
        kSettings.bad(k,
                      "expects \"namespace\" (a collection per revision, KBs told apart by the "
                      "payload) or \"collection\" (a collection per KB and revision)");
    } else if (k == "collection_prefix") {
      s.collection_prefix = kSettings.string(v, k, false);
      if (!valid_prefix(s.collection_prefix))
        kSettings.bad(k, "expects 1 to 40 characters of letters, digits, '_' and '-'");
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

// Objects keep their nesting; arrays are dropped (payload_metadata() in the header says why).
json payload_metadata(const json& metadata) {
  json out = json::object();
  for_each_filterable(metadata, [&](const std::string& path, const json& v) {
    if (v.is_array()) return;
    json* node = &out;  // the parent objects came first, so every step but the last exists
    std::size_t from = 0;
    for (auto dot = path.find('.'); dot != std::string::npos; dot = path.find('.', from)) {
      node = &(*node)[path.substr(from, dot - from)];
      from = dot + 1;
    }
    (*node)[path.substr(from)] = v.is_object() ? json::object() : v;
  });
  return out;
}

json present_paths(const json& metadata) {
  json paths = json::array();
  for_each_filterable(metadata,
                      [&](const std::string& path, const json&) { paths.push_back(path); });
  return paths;
}

json translate_filter(const core::Filter& filter) {
  if (filter.empty()) return nullptr;
  return kDialect.translate(filter);
}

json kb_condition(const std::string& kb) {
  return {{"key", kKbKey}, {"match", {{"value", kb}}}};
}

PluginSchema qdrant_store_schema() {
  const QdrantSettings d;
  using core::plugin_setting;
  PluginSchema s;
  s.description =
      "A Qdrant server (REST): a collection per revision shared by KBs (namespace) or per KB "
      "and revision (collection).";
  s.settings = remote_settings_schema(d, "api-key");
  s.settings.push_back(plugin_setting(
      "tenancy", "string", "\"" + d.tenancy + "\"",
      "namespace: one collection per revision, KBs told apart by the payload; collection: one "
      "per KB and revision.",
      false, {"namespace", "collection"}));
  s.settings.push_back(plugin_setting("collection_prefix", "string",
                                      "\"" + d.collection_prefix + "\"",
                                      "Start of every collection name (1-40 of [A-Za-z0-9_-])."));
  s.settings.push_back(plugin_setting("batch_size", "integer", std::to_string(d.batch_size),
                                      "Points per upsert request and per scroll page."));
  s.settings.push_back(plugin_setting("exact", "boolean", d.exact ? "true" : "false",
                                      "Search without the HNSW index: exact, slower."));
  s.settings.push_back(plugin_setting("hnsw_ef", "integer", std::to_string(d.hnsw_ef),
                                      "Per-query HNSW breadth; 0 = the collection's default."));
  s.settings.push_back(plugin_setting("hnsw_m", "integer", std::to_string(d.hnsw_m),
                                      "HNSW links per node of the collections Quarry creates."));
  s.settings.push_back(plugin_setting("hnsw_ef_construct", "integer",
                                      std::to_string(d.hnsw_ef_construct),
                                      "HNSW build breadth of the collections Quarry creates."));
  return s;
}

}  // namespace quarry::store::qdrant
