// A libpq client of pgvector written by hand, without the pgvector store: the "direct" peer of
// bench/stores.sh, dressed in the VectorStore interface only so that quarry-bench ann times it
// with the same loop as the store (build(), run_queries()).
#pragma once

#include <memory>
#include <string>

#include "store/vector_store.h"

namespace quarry::bench {

// mode "plain": what the kit's bench_pgvector does (session-level SET hnsw.ef_search once,
//   prepared binary SELECT ... ORDER BY embedding <=> $1 LIMIT k, prepared multi-row INSERT);
// mode "same_sql": the statements the store sends (BEGIN with SET LOCAL ef_search and
//   iterative_scan, the kb-scoped query re-sorted in a CTE, COMMIT).
// Both create the store's table layout with its HNSW index first (m 16, ef_construction 200)
// in schema bench_direct, and insert what upsert_many is given in one multi-row INSERT.
std::unique_ptr<store::VectorStore> make_pg_direct(const std::string& dsn, const std::string& mode,
                                                   int dimensions);

}  // namespace quarry::bench
