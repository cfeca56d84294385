// The pure half of the `pgvector` store (SPEC §6): settings, table naming and SQL generation.
// No libpq here, so every statement the store sends can be unit-tested without a server
// (tests/store/pgvector_sql_test.cpp).
//
// Two invariants every function here keeps:
// - Values are never spliced into SQL. They travel as parameters ($n, text format, with an
//   explicit cast in the statement); SqlParams hands out the placeholders.
// - Identifiers (schema, tables) are always double-quoted (quote_ident()), and the names this
//   store makes up are [a-z0-9_] anyway; the schema name from the settings is validated.
//
// Filters (§4) are pushed down into SQL over the `metadata jsonb` column with exactly
// core::filter_matches()'s semantics: comparisons only match a value of the same kind (jsonb
// equality already refuses "1" = 1 and true = 1, and compares numbers as numerics, 1 = 1.0);
// order comparisons test jsonb_typeof() first, inside a CASE so a string is never cast to
// numeric; strings order bytewise (COLLATE "C", as std::string does); a missing field matches
// only $ne, $nin and $exists: false. Every leaf is two-valued (never SQL NULL), so AND/OR nest.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/filter.h"
#include "quarry/plugin.h"

namespace quarry::store::pgvector {

struct PgSettings {
  std::string dsn_secret;              // name of the secret holding the libpq DSN (required)
  std::string schema = "quarry";       // every table of this store lives in it
  std::string tenancy = "row_filter";  // row_filter | collection
  std::string index = "hnsw";          // hnsw | ivfflat
  int m = 16;                          // HNSW
  int ef_construction = 64;            // HNSW
  int ef_search = 40;                  // HNSW, per query (raised to top_k, at most 1000)
  int lists = 100;                     // IVFFlat
  int probes = 10;                     // IVFFlat, per query
  std::string iterative_scan = "relaxed_order";  // relaxed_order | strict_order | off (>= 0.8)
  int pool_size = 4;                             // connections; 1 works (PGlite serves only one)
  int connect_timeout_s = 10;
  int acquire_timeout_ms = 60000;  // waiting for a free pooled connection
  int batch_rows = 500;            // rows per multi-row INSERT
  bool create_extension = true;    // CREATE EXTENSION vector when the server offers it
  bool reset_on_connect = true;    // ROLLBACK + DISCARD ALL on a new connection (PGlite)
};

// Throws Error(invalid_argument) naming the offending key (unknown keys included).
PgSettings parse_pg_settings(const nlohmann::json& settings);
// The keys parse_pg_settings() reads, with PgSettings' defaults.
PluginSchema pgvector_store_schema();

// "x" with embedded quotes doubled: safe for any identifier.
std::string quote_ident(const std::string& name);
// "schema"."table"
std::string qualified(const std::string& schema, const std::string& table);

// Table names (unquoted, [a-z0-9_], < 63 characters). row_filter: one table per revision,
// shared by the KBs embedded under it; collection: one per (KB, revision).
std::string table_name(const PgSettings& s, const std::string& kb, const std::string& revision);

// The registry of scopes: (kb, revision) -> table, dimensions.
std::string scopes_table_ddl(const std::string& schema);
// CREATE TABLE + CREATE INDEX for one vectors table.
std::vector<std::string> vectors_table_ddl(const PgSettings& s, const std::string& table,
                                           int dimensions);
// The SET LOCAL statements of one query (index breadth, iterative scan when supported).
std::string query_settings_sql(const PgSettings& s, int top_k, bool iterative_scan_supported);

// Collects parameter values; add() returns the placeholder ("$3") for the value it stored.
class SqlParams {
 public:
  std::string add(std::string value);         // sent as text
  std::string add_binary(std::string value);  // sent in the type's binary form
  const std::vector<std::string>& values() const { return values_; }
  const std::vector<int>& formats() const { return formats_; }  // 1 binary, 0 text

 private:
  std::vector<std::string> values_;
  std::vector<int> formats_;
};

// The filter as a boolean SQL expression over `column` (jsonb). An empty filter gives "TRUE".
std::string filter_sql(const core::Filter& filter, SqlParams& params,
                       const std::string& column = "metadata");

// The document metadata as stored (jsonb text). Numbers are normalised so that SQL's exact
// numerics compare as filter_matches() does: a double of magnitude in [2^53, 2^63) is an integer
// and is written as one (its shortest decimal form is not exact), an unsigned integer beyond
// int64 becomes a double (the reference compares it as one). Invalid UTF-8 is replaced.
std::string metadata_json(const nlohmann::json& metadata);

// pgvector's text form of a vector, "[1,0.5,...]": shortest round-trip floats, so the server
// stores exactly the floats it was given.
std::string vector_literal(const std::vector<float>& v);
// The vector in pgvector's binary wire form (vector_recv): int16 dimensions, int16 unused, then
// the float32s, all big-endian. Parsing it costs the server nothing next to the text literal.
std::string vector_binary(const std::vector<float>& v);
// A text[] literal ({"a","b"}) for path parameters.
std::string text_array_literal(const std::vector<std::string>& items);
// "0.8.1" -> true when >= major.minor.
bool version_at_least(const std::string& version, int major, int minor);

}  // namespace quarry::store::pgvector
