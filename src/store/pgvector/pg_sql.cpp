// Settings, names and SQL of the pgvector store. See pg_sql.h for the invariants.
#include "store/pgvector/pg_sql.h"

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>

#include "core/plugin_version.h"
#include "core/util.h"
#include "quarry/error.h"
#include "store/settings_reader.h"

namespace quarry::store::pgvector {
namespace {
using nlohmann::json;
using Op = core::Filter::Op;

const SettingsReader kSettings("pgvector");

bool valid_schema(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string hex16(const std::string& bytes) {
  return core::sha256_hex(bytes).substr(0, 16);
}

constexpr double kTwo53 = 9007199254740992.0;
constexpr double kTwo63 = 9223372036854775808.0;

// An integral double written exactly (see metadata_json()); nullopt when the shortest form is.
std::optional<std::int64_t> exact_integer(double d) {
  if (std::fabs(d) >= kTwo53 && std::fabs(d) < kTwo63) return static_cast<std::int64_t>(d);
  return std::nullopt;
}

json normalise_numbers(const json& j) {
  if (j.is_object() || j.is_array()) {
    json out = j.is_object() ? json::object() : json::array();
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (j.is_object())
        out[it.key()] = normalise_numbers(*it);
      else
        out.push_back(normalise_numbers(*it));
    }
    return out;
  }
  if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    return json(static_cast<double>(j.get<std::uint64_t>()));
  if (j.is_number_float())
    if (auto i = exact_integer(j.get<double>())) return json(*i);
  return j;
}

// A JSON scalar as jsonb text (for equality against jsonb values).
std::string jsonb_text(const core::Scalar& s) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          return "null";
        } else if constexpr (std::is_same_v<T, double>) {
          if (auto i = exact_integer(v)) return std::to_string(*i);
          return json(v).dump();
        } else {
          return json(v).dump();
        }
      },
      s);
}

// A number as numeric text, printed as metadata_json() prints metadata numbers: shortest
// round-trip for doubles (order-preserving), exact integers for integral doubles below 2^63.
std::string numeric_text(const core::Scalar& s) {
  if (std::holds_alternative<std::int64_t>(s)) return std::to_string(std::get<std::int64_t>(s));
  if (auto i = exact_integer(std::get<double>(s))) return std::to_string(*i);
  return json(std::get<double>(s)).dump();
}

bool integer_like(const std::string& seg) {
  std::size_t i = seg[0] == '-' ? 1 : 0;
  if (i >= seg.size()) return false;
  for (; i < seg.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(seg[i]))) return false;
  return true;
}

std::vector<std::string> split_field(const std::string& field) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto dot = field.find('.', start);
    out.push_back(field.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

// The jsonb value at `field`, or SQL NULL when it is missing. `#>` would also index arrays
// ("a.0"), which filter_matches() never does: such paths check that every parent is an object.
std::string accessor(const std::string& field, SqlParams& p, const std::string& column) {
  auto segs = split_field(field);
  if (segs.size() == 1) return "(" + column + " -> " + p.add(segs[0]) + "::text)";
  std::string value = "(" + column + " #> " + p.add(text_array_literal(segs)) + "::text[])";
  bool needs_guard = false;
  for (std::size_t i = 1; i < segs.size(); ++i) needs_guard = needs_guard || integer_like(segs[i]);
  if (!needs_guard) return value;
  std::string guard;
  for (std::size_t n = 1; n < segs.size(); ++n) {
    std::vector<std::string> prefix(segs.begin(), segs.begin() + static_cast<long>(n));
    guard += (guard.empty() ? "" : " AND ") + std::string("jsonb_typeof(") + column + " #> " +
             p.add(text_array_literal(prefix)) + "::text[]) = 'object'";
  }
  return "(CASE WHEN " + guard + " THEN " + value + " END)";
}

const char* order_op(Op op) {
  switch (op) {
    case Op::Gt:
      return ">";
    case Op::Gte:
      return ">=";
    case Op::Lt:
      return "<";
    default:
      return "<=";
  }
}

std::string leaf_sql(const core::Filter& f, SqlParams& p, const std::string& column) {
  // Before accessor(): a parameter the statement never uses has no type, which the server refuses.
  if ((f.op == Op::In || f.op == Op::Nin) && f.values.empty())
    return f.op == Op::In ? "FALSE" : "TRUE";
  const std::string x = accessor(f.field, p, column);
  switch (f.op) {
    case Op::Exists:
      return "(" + x + (std::get<bool>(f.values[0]) ? " IS NOT NULL)" : " IS NULL)");
    case Op::Eq:
      return "((" + x + " = " + p.add(jsonb_text(f.values[0])) + "::jsonb) IS TRUE)";
    case Op::Ne:
      return "((" + x + " = " + p.add(jsonb_text(f.values[0])) + "::jsonb) IS NOT TRUE)";
    case Op::In:
    case Op::Nin: {
      std::string any;
      for (const auto& v : f.values)
        any += (any.empty() ? "" : " OR ") + x + " = " + p.add(jsonb_text(v)) + "::jsonb";
      return "((" + any + (f.op == Op::In ? ") IS TRUE)" : ") IS NOT TRUE)");
    }
    default:
      break;
  }
  const auto& v = f.values[0];
  if (std::holds_alternative<std::string>(v))
    return "(CASE WHEN jsonb_typeof(" + x + ") = 'string' THEN (" + x +
           " #>> '{}') COLLATE \"C\" " + order_op(f.op) + " " + p.add(std::get<std::string>(v)) +
           "::text ELSE FALSE END)";
  return "(CASE WHEN jsonb_typeof(" + x + ") = 'number' THEN (" + x + ")::numeric " +
         order_op(f.op) + " " + p.add(numeric_text(v)) + "::numeric ELSE FALSE END)";
}

}  // namespace

PgSettings parse_pg_settings(const json& settings) {
  PgSettings s;
  if (settings.is_null())
    kSettings.bad("dsn_secret", "is required (the name of a secret holding the DSN)");
  if (!settings.is_object())
    throw Error(Code::invalid_argument, "pgvector settings must be an object");
  for (const auto& [key, v] : settings.items()) {
    if (key == "dsn_secret")
      s.dsn_secret = kSettings.string(v, key, /*may_be_empty=*/true);
    else if (key == "schema")
      s.schema = kSettings.string(v, key, /*may_be_empty=*/true);
    else if (key == "tenancy")
      s.tenancy = kSettings.one_of(v, key, {"row_filter", "collection"});
    else if (key == "index")
      s.index = kSettings.one_of(v, key, {"hnsw", "ivfflat"});
    else if (key == "m")
      s.m = kSettings.integer(v, key, 2, 100);
    else if (key == "ef_construction")
      s.ef_construction = kSettings.integer(v, key, 4, 1000);
    else if (key == "ef_search")
      s.ef_search = kSettings.integer(v, key, 1, 1000);
    else if (key == "lists")
      s.lists = kSettings.integer(v, key, 1, 32768);
    else if (key == "probes")
      s.probes = kSettings.integer(v, key, 1, 32768);
    else if (key == "iterative_scan")
      s.iterative_scan = kSettings.one_of(v, key, {"relaxed_order", "strict_order", "off"});
    else if (key == "pool_size")
      s.pool_size = kSettings.integer(v, key, 1, 256);
    else if (key == "connect_timeout_s")
      s.connect_timeout_s = kSettings.integer(v, key, 1, 3600);
    else if (key == "acquire_timeout_ms")
      s.acquire_timeout_ms = kSettings.integer(v, key, 1, 3600000);
    else if (key == "batch_rows")
      s.batch_rows = kSettings.integer(v, key, 1, 5000);
    else if (key == "create_extension") {
      if (!v.is_boolean()) kSettings.bad(key, "expects true or false");
      s.create_extension = v.get<bool>();
    } else if (key == "reset_on_connect") {
      if (!v.is_boolean()) kSettings.bad(key, "expects true or false");
      s.reset_on_connect = v.get<bool>();
    } else {
      kSettings.bad(key,
                    "unknown (known: dsn_secret schema tenancy index m ef_construction ef_search "
                    "lists probes iterative_scan pool_size connect_timeout_s acquire_timeout_ms "
                    "batch_rows create_extension reset_on_connect)");
    }
  }
  if (s.dsn_secret.empty())
    kSettings.bad("dsn_secret",
                  "is required: the name of a secret holding the libpq DSN "
                  "(e.g. `quarry secret set pg-dsn`)");
  if (!valid_schema(s.schema))
    kSettings.bad(
        "schema",
        "'" + s.schema + "' must be 1-63 characters of [A-Za-z0-9_], not starting with a digit");
  if (s.ef_construction < 2 * s.m)
    kSettings.bad("ef_construction", "must be at least 2 * m (pgvector's rule)");
  return s;
}

std::string quote_ident(const std::string& name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string qualified(const std::string& schema, const std::string& table) {
  return quote_ident(schema) + "." + quote_ident(table);
}

std::string table_name(const PgSettings& s, const std::string& kb, const std::string& revision) {
  if (s.tenancy == "row_filter") return "v_" + hex16(revision);
  return "c_" + hex16(kb) + "_" + hex16(kb + std::string(1, '\0') + revision);
}

std::string scopes_table_ddl(const std::string& schema) {
  return "CREATE TABLE IF NOT EXISTS " + qualified(schema, "quarry_scopes") +
         " (kb text NOT NULL, revision text NOT NULL, table_name text NOT NULL, "
         "dimensions integer NOT NULL, PRIMARY KEY (kb, revision))";
}

std::vector<std::string> vectors_table_ddl(const PgSettings& s, const std::string& table,
                                           int dimensions) {
  const std::string t = qualified(s.schema, table);
  std::vector<std::string> out;
  // chunk_id and vec_sha let a re-upsert skip identical chunks without reading vectors back.
  out.push_back("CREATE TABLE IF NOT EXISTS " + t +
                " (kb text NOT NULL, doc_id text NOT NULL, chunk_index integer NOT NULL, "
                "chunk_id text NOT NULL, embedding vector(" +
                std::to_string(dimensions) +
                ") NOT NULL, vec_sha text NOT NULL, metadata jsonb NOT NULL DEFAULT '{}', "
                "PRIMARY KEY (kb, doc_id, chunk_index))");
  const std::string index = quote_ident(table + "_embedding");
  if (s.index == "hnsw")
    out.push_back("CREATE INDEX IF NOT EXISTS " + index + " ON " + t +
                  " USING hnsw (embedding vector_cosine_ops) WITH (m = " + std::to_string(s.m) +
                  ", ef_construction = " + std::to_string(s.ef_construction) + ")");
  else
    out.push_back("CREATE INDEX IF NOT EXISTS " + index + " ON " + t +
                  " USING ivfflat (embedding vector_cosine_ops) WITH (lists = " +
                  std::to_string(s.lists) + ")");
  return out;
}

std::string query_settings_sql(const PgSettings& s, int top_k, bool iterative_scan_supported) {
  // Settings values are integers and enum words validated by parse_pg_settings(): SET cannot
  // take parameters, and nothing user-typed reaches this string.
  std::string sql;
  const bool iterate = iterative_scan_supported && s.iterative_scan != "off";
  if (s.index == "hnsw") {
    // An HNSW scan returns at most ef_search rows: never less than k (pgvector caps it at 1000).
    int ef = std::max(s.ef_search, std::min(top_k, 1000));
    sql += "SET LOCAL hnsw.ef_search = " + std::to_string(ef) + ";";
    if (iterate) sql += "SET LOCAL hnsw.iterative_scan = " + s.iterative_scan + ";";
  } else {
    sql += "SET LOCAL ivfflat.probes = " + std::to_string(s.probes) + ";";
    // ivfflat knows relaxed_order only.
    if (iterate) sql += "SET LOCAL ivfflat.iterative_scan = relaxed_order;";
  }
  return sql;
}

std::string SqlParams::add(std::string value) {
  values_.push_back(std::move(value));
  formats_.push_back(0);
  return "$" + std::to_string(values_.size());
}

std::string SqlParams::add_binary(std::string value) {
  values_.push_back(std::move(value));
  formats_.push_back(1);
  return "$" + std::to_string(values_.size());
}

std::string filter_sql(const core::Filter& f, SqlParams& p, const std::string& column) {
  if (f.op == Op::And || f.op == Op::Or) {
    if (f.children.empty()) return f.op == Op::And ? "TRUE" : "FALSE";
    std::string out;
    for (const auto& c : f.children)
      out += (out.empty() ? "" : (f.op == Op::And ? " AND " : " OR ")) + filter_sql(c, p, column);
    return "(" + out + ")";
  }
  return leaf_sql(f, p, column);
}

std::string metadata_json(const json& metadata) {
  return normalise_numbers(metadata).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string vector_literal(const std::vector<float>& v) {
  std::string out = "[";
  char buf[32];
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    auto r = std::to_chars(buf, buf + sizeof buf, v[i]);
    out.append(buf, r.ptr);
  }
  return out + "]";
}

std::string vector_binary(const std::vector<float>& v) {
  std::string out(4 + 4 * v.size(), '\0');
  auto put16 = [&](std::size_t at, std::uint16_t x) {
    out[at] = static_cast<char>(x >> 8);
    out[at + 1] = static_cast<char>(x & 0xff);
  };
  put16(0, static_cast<std::uint16_t>(v.size()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint32_t u;
    std::memcpy(&u, &v[i], 4);
    for (int b = 0; b < 4; ++b) out[4 + 4 * i + b] = static_cast<char>(u >> (24 - 8 * b));
  }
  return out;
}

std::string text_array_literal(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

bool version_at_least(const std::string& version, int major, int minor) {
  int a = 0, b = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &a, &b) < 1) return false;
  return a > major || (a == major && b >= minor);
}

PluginSchema pgvector_store_schema() {
  const PgSettings d;
  using core::plugin_setting;
  auto str = [](const std::string& v) { return "\"" + v + "\""; };
  auto num = [](int v) { return std::to_string(v); };
  auto boolean = [](bool v) { return std::string(v ? "true" : "false"); };
  PluginSchema s;
  s.description = "PostgreSQL with the vector extension (pgvector): vectors in your database.";
  s.settings = {
      plugin_setting("dsn_secret", "secret-name", "",
                     "The secret holding the libpq connection string.", true),
      plugin_setting("schema", "string", str(d.schema),
                     "The schema that holds every table of this store."),
      plugin_setting("tenancy", "string", str(d.tenancy),
                     "row_filter: one table per revision shared by KBs; collection: one per KB "
                     "and revision.",
                     false, {"row_filter", "collection"}),
      plugin_setting("index", "string", str(d.index), "The index over cosine distance.", false,
                     {"hnsw", "ivfflat"}),
      plugin_setting("m", "integer", num(d.m), "HNSW links per node, 2-100."),
      plugin_setting("ef_construction", "integer", num(d.ef_construction),
                     "HNSW build breadth, at least 2 * m."),
      plugin_setting("ef_search", "integer", num(d.ef_search),
                     "HNSW breadth per query (raised to top_k)."),
      plugin_setting("lists", "integer", num(d.lists), "IVFFlat lists."),
      plugin_setting("probes", "integer", num(d.probes), "IVFFlat lists probed per query."),
      plugin_setting("iterative_scan", "string", str(d.iterative_scan),
                     "pgvector >= 0.8: keep scanning until a filtered query has k rows.", false,
                     {"relaxed_order", "strict_order", "off"}),
      plugin_setting("pool_size", "integer", num(d.pool_size), "Pooled connections."),
      plugin_setting("connect_timeout_s", "integer", num(d.connect_timeout_s),
                     "Limit for opening a connection."),
      plugin_setting("acquire_timeout_ms", "integer", num(d.acquire_timeout_ms),
                     "Wait for a free pooled connection this long, then busy."),
      plugin_setting("batch_rows", "integer", num(d.batch_rows), "Rows per multi-row INSERT."),
      plugin_setting("create_extension", "boolean", boolean(d.create_extension),
                     "Run CREATE EXTENSION vector when the database lacks it."),
      plugin_setting("reset_on_connect", "boolean", boolean(d.reset_on_connect),
                     "ROLLBACK; DISCARD ALL on a new connection.")};
  return s;
}

}  // namespace quarry::store::pgvector
