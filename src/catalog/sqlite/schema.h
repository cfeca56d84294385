#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace quarry::catalog {

int latest_schema_version();
// Applies every pending migration (idempotent; safe when several processes open at once).
void migrate(sqlite3* db);

// Each KB has its own FTS5 table, so BM25 statistics and candidate sets never mix KBs.
std::string fts_table(std::int64_t kb_id);
void create_fts(sqlite3* db, std::int64_t kb_id, const std::string& tokenize);
void drop_fts(sqlite3* db, std::int64_t kb_id);

// The connection's FTS5 extension API (nullptr if FTS5 is missing), looked up once per
// connection by Catalog::open; and the quarry_bm25() ranking function registered on it
// (fts_rank.cpp).
fts5_api* fts5_api_of(sqlite3* db);
void register_rank_function(fts5_api* api);

}  // namespace quarry::catalog
