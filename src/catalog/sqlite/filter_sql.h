// Compiles the metadata filter AST (core/filter.h) into a SQL boolean expression over a JSON
// metadata column. Every value and JSON path is a bound parameter; nothing from the user is
// spliced into SQL text. Semantics equal core::filter_matches (tested against it).
#pragma once

#include <string>
#include <vector>

#include "core/filter.h"

namespace quarry::catalog {

class Stmt;

struct SqlFilter {
  std::string sql = "1";             // boolean expression
  std::vector<core::Scalar> params;  // in order of appearance of '?'
};

SqlFilter compile_filter(const core::Filter& f, const std::string& column);
// Binds params starting at parameter index `first`; returns the next free index.
int bind_filter(Stmt& st, const SqlFilter& f, int first);

}  // namespace quarry::catalog
