// The metadata filter (core/filter.h) inside the catalog's SQL: one call of the SQL function
// quarry_filter(metadata, ?) that evaluates the filter with core::filter_matches, the
// reference semantics, on the document's metadata. The filter's syntax tree is bound as a
// pointer (never text spliced into SQL), so a statement's SQL is the same for every filter:
// preparing it costs the same for one condition as for ten thousand, and no filter can reach
// SQLite's limits on expression depth or bound parameters (translating each condition into SQL
// did both, and made SQLite's planning quadratic in the number of conditions: 300 $in clauses
// took 12 s to prepare). Each distinct metadata text is parsed and evaluated once per
// statement run, however many chunk rows and documents carry it.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "core/filter.h"

namespace quarry::catalog {

class Stmt;

struct SqlFilter {
  std::string sql = "1";                 // boolean expression
  const core::Filter* filter = nullptr;  // null: no filter (nothing to bind)
  std::uint64_t serial = 0;              // unique per compile: keys the verdicts SQLite keeps
};

// The filter over the metadata column of the documents table under `alias`. Both
// `f` and the SqlFilter (bound as the pointer) must outlive the statement's use.
SqlFilter compile_filter(const core::Filter& f, const std::string& alias);
// Binds the filter (when there is one) at parameter index `first`; returns the next free index.
int bind_filter(Stmt& st, const SqlFilter& f, int first);

// Registers quarry_filter() on a connection (once, before any filtered statement).
void register_filter_function(sqlite3* db);

}  // namespace quarry::catalog
