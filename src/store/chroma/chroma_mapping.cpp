// The pure half of the chroma store: settings, names, ids, metadata flattening and the filter
// translation. No I/O here, so all of it is unit-tested without a server
// (tests/store/chroma_mapping_test.cpp).
//
// Filter semantics were checked against Chroma 1.0 (the Rust core): `$ne` and `$nin` match
// records that lack the key or hold another type; `$eq`/`$in`/order operators compare ints and
// floats numerically and never match bools or strings; `$in`/`$nin` need a non-empty list of
// one type; order operators refuse strings. That is filter_matches() exactly, once nulls and
// presence get marker keys and mixed lists are split by type.
#include <variant>

#include "core/plugin_version.h"
#include "core/util.h"
#include "quarry/error.h"
#include "store/chroma/chroma_store.h"
#include "store/filter_translate.h"
#include "store/remote_call.h"
#include "store/settings_reader.h"

namespace quarry::store::chroma {
using nlohmann::json;

namespace {

const SettingsReader kSettings("chroma");

json cond(const std::string& key, const std::string& op, json value) {
  return {{key, {{op, std::move(value)}}}};
}

// Chroma's `where`: {"f": {"$op": v}} leaves under $and / $or. Nulls and presence are tested on
// the marker keys flatten_metadata() writes; Chroma wants one type per $in/$nin list.
class ChromaDialect final : public FilterDialect {
 public:
  ChromaDialect() : FilterDialect("chroma", "$and", "$or", "Chroma orders numbers only") {}

 protected:
  // Every record has quarry:chunk_index >= 0.
  json tautology() const override { return cond(kIndexKey, "$gte", 0); }
  json contradiction() const override { return cond(kIndexKey, "$lt", 0); }

  json exists(const std::string& field, bool want) const override {
    return cond(kHasPrefix + field, want ? "$eq" : "$ne", true);
  }
  json equal(const std::string& field, const core::Scalar& v) const override {
    if (std::holds_alternative<std::nullptr_t>(v)) return cond(kNullPrefix + field, "$eq", true);
    return cond(field, "$eq", value_json(v));
  }
  json not_equal(const std::string& field, const core::Scalar& v) const override {
    if (std::holds_alternative<std::nullptr_t>(v)) return cond(kNullPrefix + field, "$ne", true);
    return cond(field, "$ne", value_json(v));
  }
  json order(const std::string& field, core::Filter::Op op, const core::Scalar& v) const override {
    return cond(field, std::string("$") + order_name(op), value_json(v));
  }
  json in(const std::string& field, const std::vector<core::Scalar>& values) const override {
    return any_of(lists(field, "$in", values, "$eq"));
  }
  json not_in(const std::string& field, const std::vector<core::Scalar>& values) const override {
    return all_of(lists(field, "$nin", values, "$ne"));
  }

 private:
  // One homogeneous, non-empty list per kind of value; null by its marker.
  static std::vector<json> lists(const std::string& field, const char* op,
                                 const std::vector<core::Scalar>& values, const char* null_op) {
    ValuesByKind g = group_by_kind(values);
    std::vector<json> parts;
    for (json* l : {&g.strings, &g.ints, &g.doubles, &g.bools})
      if (!l->empty()) parts.push_back(cond(field, op, std::move(*l)));
    if (g.has_null) parts.push_back(cond(kNullPrefix + field, null_op, true));
    return parts;
  }
};

const ChromaDialect kDialect;

}  // namespace

ChromaSettings parse_chroma_settings(const json& settings) {
  ChromaSettings s;
  if (settings.is_null()) return s;
  if (!settings.is_object())
    throw Error(Code::invalid_argument, "chroma store settings must be a JSON object",
                {{"store", "chroma"}});
  for (const auto& [k, v] : settings.items()) {
    if (kSettings.remote(s, k, v)) continue;  // url, allow_private, timeouts, retries, key
    if (k == "tenant") {
      s.tenant = kSettings.string(v, k, false);
    } else if (k == "database") {
      s.database = kSettings.string(v, k, false);
    } else if (k == "create_database") {
      s.create_database = kSettings.boolean(v, k);
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
  for_each_filterable(metadata, [&](const std::string& path, const json& v) {
    out[kHasPrefix + path] = true;
    if (v.is_null())
      out[kNullPrefix + path] = true;
    else if (v.is_boolean() || v.is_string())
      out[path] = v;
    else if (v.is_number_integer())
      out[path] = v.get<std::int64_t>();
    else if (v.is_number_float())
      out[path] = v.get<double>();
    // Objects: their members follow. Arrays: presence only. filter_matches() compares no scalar
    // equal to an array, so only $ne / $nin / $exists can match one, and those hold for a key
    // Chroma does not have.
  });
  return out;
}

json translate_filter(const core::Filter& filter) {
  if (filter.empty()) return json::object();
  return kDialect.translate(filter);
}

PluginSchema chroma_store_schema() {
  const ChromaSettings d;
  using core::plugin_setting;
  PluginSchema s;
  s.description = "A Chroma server (HTTP API v2): one collection per KB revision.";
  s.settings = remote_settings_schema(d, "x-chroma-token");
  s.settings.push_back(
      plugin_setting("tenant", "string", "\"" + d.tenant + "\"", "Chroma tenant."));
  s.settings.push_back(plugin_setting("database", "string", "\"" + d.database + "\"",
                                      "Chroma database in that tenant."));
  s.settings.push_back(plugin_setting("create_database", "boolean", "false",
                                      "Create the database when the tenant lacks it."));
  s.settings.push_back(
      plugin_setting("batch_size", "integer", std::to_string(d.batch_size),
                     "Records per write or read batch; 0 = the server's max_batch_size."));
  s.settings.push_back(plugin_setting("ef_search", "integer", std::to_string(d.ef_search),
                                      "HNSW search breadth of the collections Quarry creates."));
  s.settings.push_back(plugin_setting("ef_construction", "integer",
                                      std::to_string(d.ef_construction),
                                      "HNSW build breadth of the collections Quarry creates."));
  s.settings.push_back(plugin_setting("max_neighbors", "integer", std::to_string(d.max_neighbors),
                                      "HNSW links per node of the collections Quarry creates."));
  return s;
}

}  // namespace quarry::store::chroma
