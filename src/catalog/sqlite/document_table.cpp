// Documents and their chunks (document_table.h) in SQLite: every write is one transaction
// that changes the document's chunks and FTS5 postings with it and writes its audit row.
#include <nlohmann/json.hpp>

#include "catalog/sqlite/filter_sql.h"
#include "catalog/sqlite/read_rows.h"
#include "catalog/sqlite/tables.h"
#include "catalog/sqlite/writes.h"
#include "quarry/error.h"

namespace quarry::catalog {
using nlohmann::json;

std::optional<DocumentRow> SqliteDocumentTable::find_by_filename(
    const KbRef& kb, const std::string& filename) const {
  Stmt s(*stmts_,
         std::string("SELECT ") + kDocColumns +
             " FROM documents d JOIN kbs k ON k.id = d.kb_id WHERE d.kb_id = ? AND d.filename = ?");
  s.bind(1, kb.id).bind(2, filename);
  if (!s.step()) return std::nullopt;
  return read_doc(s);
}

std::optional<DocumentRow> SqliteDocumentTable::find(const KbRef& kb, const std::string& id) const {
  Stmt s(*stmts_,
         std::string("SELECT ") + kDocColumns +
             " FROM documents d JOIN kbs k ON k.id = d.kb_id WHERE d.kb_id = ? AND d.id = ?");
  s.bind(1, kb.id).bind(2, id);
  if (!s.step()) return std::nullopt;
  return read_doc(s);
}

std::vector<DocumentRow> SqliteDocumentTable::list(const KbRef& kb, const std::string& after,
                                                   int limit, const core::Filter& filter) const {
  SqlFilter f = compile_filter(filter, "d");
  Stmt s(db_,
         std::string("SELECT ") + kDocColumns +
             " FROM documents d JOIN kbs k ON k.id = d.kb_id WHERE d.kb_id = ? AND d.id > ? AND " +
             f.sql + " ORDER BY d.id LIMIT ?");
  s.bind(1, kb.id).bind(2, after);
  int next = bind_filter(s, f, 3);
  s.bind(next, limit);
  std::vector<DocumentRow> out;
  while (s.step()) out.push_back(read_doc(s));
  return out;
}

std::vector<DocumentRef> SqliteDocumentTable::refs(const KbRef& kb,
                                                   const core::Filter& filter) const {
  SqlFilter f = compile_filter(filter, "d");
  Stmt s(db_,
         "SELECT d.id, d.filename, d.subject_key, d.subject_value FROM documents d"
         " WHERE d.kb_id = ? AND " +
             f.sql + " ORDER BY d.id");
  s.bind(1, kb.id);
  bind_filter(s, f, 2);
  std::vector<DocumentRef> out;
  while (s.step()) out.push_back({s.str(0), s.str(1), s.opt_str(2), s.opt_str(3)});
  return out;
}

std::int64_t SqliteDocumentTable::count_matching(const KbRef& kb,
                                                 const core::Filter& filter) const {
  SqlFilter f = compile_filter(filter, "d");
  Stmt s(db_, "SELECT COUNT(*) FROM documents d WHERE d.kb_id = ? AND " + f.sql);
  s.bind(1, kb.id);
  bind_filter(s, f, 2);
  s.step();
  return s.i64(0);
}

bool SqliteDocumentTable::any(const KbRef& kb, const core::Filter& filter) const {
  SqlFilter f = compile_filter(filter, "d");
  Stmt s(db_, "SELECT EXISTS(SELECT 1 FROM documents d WHERE d.kb_id = ? AND " + f.sql + ")");
  s.bind(1, kb.id);
  bind_filter(s, f, 2);
  s.step();
  return s.i64(0) != 0;
}

std::vector<ChunkRow> SqliteDocumentTable::chunks_of(const KbRef& kb,
                                                     const std::string& doc_id) const {
  Stmt s(*stmts_, std::string("SELECT ") + kChunkColumns +
                      " FROM chunks c WHERE c.kb_id = ? AND c.doc_id = ? ORDER BY c.chunk_index");
  s.bind(1, kb.id).bind(2, doc_id);
  std::vector<ChunkRow> out;
  while (s.step()) out.push_back(read_chunk(s));
  return out;
}

void SqliteDocumentTable::put(const KbRef& kb, const DocumentRow& doc,
                              const std::vector<ChunkRow>& chunks, const AuditEntry& a) {
  Transaction tx(db_);
  delete_chunks(db_, kb.id, doc.id);
  bump_generation(db_, kb.id);
  Stmt(*stmts_,
       "INSERT INTO documents(id, kb_id, filename, title, source_sha256, content_sha256, metadata,"
       " subject_key, subject_value, converter, raw_ext, source_bytes, markdown_bytes, body_offset,"
       " chunk_count, created_at, updated_at, chunking) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
       " ON CONFLICT(id) DO UPDATE SET filename = excluded.filename, title = excluded.title,"
       " source_sha256 = excluded.source_sha256, content_sha256 = excluded.content_sha256,"
       " metadata = excluded.metadata, subject_key = excluded.subject_key,"
       " subject_value = excluded.subject_value, converter = excluded.converter,"
       " raw_ext = excluded.raw_ext, source_bytes = excluded.source_bytes,"
       " markdown_bytes = excluded.markdown_bytes, body_offset = excluded.body_offset,"
       " chunk_count = excluded.chunk_count, updated_at = excluded.updated_at,"
       " chunking = excluded.chunking")
      .bind(1, doc.id)
      .bind(2, kb.id)
      .bind(3, doc.filename)
      .bind(4, doc.title)
      .bind(5, doc.source_sha256)
      .bind(6, doc.content_sha256)
      .bind(7, doc.metadata_json)
      .bind(8, doc.subject_key)
      .bind(9, doc.subject_value)
      .bind(10, doc.converter)
      .bind(11, doc.raw_ext)
      .bind(12, doc.source_bytes)
      .bind(13, doc.markdown_bytes)
      .bind(14, doc.body_offset)
      .bind(15, static_cast<std::int64_t>(chunks.size()))
      .bind(16, doc.created_at)
      .bind(17, doc.updated_at)
      .bind(18, doc.chunking)
      .exec();
  insert_chunks(db_, kb.id, doc.id, doc.title, chunks);
  write_audit(db_, a);
  tx.commit();
}

bool SqliteDocumentTable::remove(const KbRef& kb, const std::string& id, const AuditEntry& a) {
  Transaction tx(db_);
  if (!find(kb, id)) return false;
  delete_document_rows(db_, kb.id, id);
  write_audit(db_, a);
  tx.commit();
  return true;
}

std::vector<std::string> SqliteDocumentTable::remove_where(const KbRef& kb,
                                                           const core::Filter& filter,
                                                           const AuditEntry& a) {
  if (filter.empty())
    throw Error(
        Code::invalid_argument,
        "a delete by filter needs a non-empty filter (name the metadata to match, e.g. --where "
        "'{\"source\": \"a.md\"}'); to delete every document, delete the knowledge "
        "base: `quarry kb delete " +
            kb.name + " --yes`",
        {{"field", "filter"}});
  Transaction tx(db_);
  SqlFilter f = compile_filter(filter, "d");
  std::vector<std::string> ids;
  {
    Stmt s(db_, "SELECT d.id FROM documents d WHERE d.kb_id = ? AND " + f.sql);
    s.bind(1, kb.id);
    bind_filter(s, f, 2);
    while (s.step()) ids.push_back(s.str(0));
  }
  for (const auto& id : ids) delete_document_rows(db_, kb.id, id);
  AuditEntry entry = a;
  entry.details_json = json{{"deleted", ids}}.dump();
  write_audit(db_, entry);
  tx.commit();
  return ids;
}

void SqliteDocumentTable::replace_chunks(const KbRef& kb, const std::string& doc_id,
                                         const std::string& chunking,
                                         const std::vector<ChunkRow>& chunks) {
  Transaction tx(db_);
  auto doc = find(kb, doc_id);
  if (!doc) return;
  delete_chunks(db_, kb.id, doc_id);
  insert_chunks(db_, kb.id, doc_id, doc->title, chunks);
  Stmt(*stmts_, "UPDATE documents SET chunk_count = ?, chunking = ? WHERE id = ?")
      .bind(1, static_cast<std::int64_t>(chunks.size()))
      .bind(2, chunking)
      .bind(3, doc_id)
      .exec();
  bump_generation(db_, kb.id);
  tx.commit();
}

std::vector<DocumentRow> SqliteDocumentTable::chunked_otherwise(const KbRef& kb,
                                                                const std::string& chunking) const {
  Stmt s(*stmts_, std::string("SELECT ") + kDocColumns +
                      " FROM documents d JOIN kbs k ON k.id = d.kb_id WHERE d.kb_id = ? AND"
                      " d.chunking <> '' AND d.chunking <> ?");
  s.bind(1, kb.id).bind(2, chunking);
  std::vector<DocumentRow> out;
  while (s.step()) out.push_back(read_doc(s));
  return out;
}

}  // namespace quarry::catalog
