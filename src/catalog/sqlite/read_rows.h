// Reading catalog rows back from statements: one column list and one reader per row type,
// shared by every query that returns documents.
#pragma once

#include "catalog/rows.h"
#include "catalog/sqlite/sqlite.h"

namespace quarry::catalog {

// The document columns, in read_doc() order ("d" = documents, "k" = kbs).
extern const char* const kDocColumns;
// Reads a document row whose kDocColumns start at column `first`.
DocumentRow read_doc(const Stmt& s, int first = 0);

// The chunk columns ("c" = chunks), in read_chunk() order, text included.
extern const char* const kChunkColumns;
constexpr int kChunkColumnCount = 8;
ChunkRow read_chunk(const Stmt& s, int first = 0);

}  // namespace quarry::catalog
