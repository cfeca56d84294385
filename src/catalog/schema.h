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
void create_fts(sqlite3* db, std::int64_t kb_id);
void drop_fts(sqlite3* db, std::int64_t kb_id);

// Registers the quarry_bm25() FTS5 ranking function on `db` (fts_rank.cpp).
void register_rank_function(sqlite3* db);

}  // namespace quarry::catalog
