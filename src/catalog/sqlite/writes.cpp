// Writes that several tables make inside their own transactions (writes.h).
#include "catalog/sqlite/writes.h"

#include <nlohmann/json.hpp>

#include "catalog/sqlite/schema.h"
#include "core/util.h"

namespace quarry::catalog {

namespace {

std::string headings_text(const std::vector<std::string>& path) {
  std::string s;
  for (const auto& h : path) {
    if (!s.empty()) s += " / ";
    s += h;
  }
  return s;
}

}  // namespace

void write_audit(sqlite3* db, const AuditEntry& a) {
  Stmt(db,
       "INSERT INTO audit(at, actor, surface, action, kb, target, details)"
       " VALUES(?, ?, ?, ?, ?, ?, ?)")
      .bind(1, core::now_ms())
      .bind(2, a.actor)
      .bind(3, a.surface)
      .bind(4, a.action)
      .bind(5, a.kb)
      .bind(6, a.target)
      .bind(7, a.details_json)
      .exec();
}

void delete_chunks(sqlite3* db, std::int64_t kb_id, const std::string& doc_id) {
  const std::string fts = fts_table(kb_id);
  Stmt del(db, "INSERT INTO " + fts + "(" + fts +
                   ", rowid, title, headings, body) SELECT 'delete', id, title, headings, body"
                   " FROM chunks WHERE doc_id = ?");
  del.bind(1, doc_id).exec();
  Stmt(db, "DELETE FROM chunks WHERE doc_id = ?").bind(1, doc_id).exec();
}

void bump_generation(sqlite3* db, std::int64_t kb_id) {
  Stmt(db, "UPDATE kbs SET generation = generation + 1 WHERE id = ?").bind(1, kb_id).exec();
}

void bump_vector_generation(sqlite3* db, std::int64_t kb_id) {
  Stmt(db, "UPDATE kbs SET vector_generation = vector_generation + 1 WHERE id = ?")
      .bind(1, kb_id)
      .exec();
}

void delete_document_rows(sqlite3* db, std::int64_t kb_id, const std::string& doc_id) {
  bump_generation(db, kb_id);
  delete_chunks(db, kb_id, doc_id);
  Stmt(db, "DELETE FROM documents WHERE id = ?").bind(1, doc_id).exec();
}

void insert_chunks(sqlite3* db, std::int64_t kb_id, const std::string& doc_id,
                   const std::string& title, const std::vector<ChunkRow>& chunks) {
  const std::string fts = fts_table(kb_id);
  Stmt ins(db,
           "INSERT INTO chunks(kb_id, doc_id, chunk_index, chunk_id, parent_chunk, heading_path,"
           " offset, length, token_count, title, headings, body) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
  Stmt idx(db, "INSERT INTO " + fts + "(rowid, title, headings, body) VALUES(?, ?, ?, ?)");
  for (const auto& c : chunks) {
    const std::string headings = headings_text(c.heading_path);
    ins.reset();
    ins.bind(1, kb_id)
        .bind(2, doc_id)
        .bind(3, c.index)
        .bind(4, c.chunk_id)
        .bind(5, c.parent_chunk)
        .bind(6, nlohmann::json(c.heading_path).dump())
        .bind(7, c.offset)
        .bind(8, c.length)
        .bind(9, c.token_count)
        .bind(10, title)
        .bind(11, headings)
        .bind(12, c.text)
        .exec();
    idx.reset();
    idx.bind(1, static_cast<std::int64_t>(sqlite3_last_insert_rowid(db)))
        .bind(2, title)
        .bind(3, headings)
        .bind(4, c.text)
        .exec();
  }
}

}  // namespace quarry::catalog
