// Writes that several tables make inside their own transactions: the audit row, a document's
// chunks with their keyword postings, and the generation counters that status caches key on.
// Private to catalog/sqlite/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/rows.h"
#include "catalog/sqlite/sqlite.h"

namespace quarry::catalog {

void write_audit(sqlite3* db, const AuditEntry& a);
// Removes a document's chunks from the KB's FTS index and the chunks table. External-content
// FTS5 needs the old values to delete its postings, so they are read back first.
void delete_chunks(sqlite3* db, std::int64_t kb_id, const std::string& doc_id);
// Inserts a document's chunks and their keyword postings (the old ones must be gone).
void insert_chunks(sqlite3* db, std::int64_t kb_id, const std::string& doc_id,
                   const std::string& title, const std::vector<ChunkRow>& chunks);
// The document generation (every document write) and the vector generation (every lifecycle
// row written) of a KB.
void bump_generation(sqlite3* db, std::int64_t kb_id);
void bump_vector_generation(sqlite3* db, std::int64_t kb_id);
// A document's row, chunks and postings (the caller's transaction).
void delete_document_rows(sqlite3* db, std::int64_t kb_id, const std::string& doc_id);

}  // namespace quarry::catalog
