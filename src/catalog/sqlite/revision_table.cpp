// The index lifecycle's rows (revision_table.h) in SQLite (schema v4, v5): revisions,
// coordinates, tombstones and staged chunks.
#include <nlohmann/json.hpp>

#include "catalog/sqlite/filter_sql.h"
#include "catalog/sqlite/read_rows.h"
#include "catalog/sqlite/tables.h"
#include "catalog/sqlite/writes.h"
#include "core/util.h"

namespace quarry::catalog {

namespace {

RevisionRow read_revision(const Stmt& s) {
  RevisionRow r;
  r.revision = s.str(0);
  r.config_revision = s.str(1);
  r.config_json = s.str(2);
  r.model = s.str(3);
  r.dimensions = static_cast<int>(s.i64(4));
  r.store_id = s.str(5);
  r.state = s.str(6);
  r.created_at = s.i64(7);
  r.completed_at = s.is_null(8) ? 0 : s.i64(8);
  return r;
}

constexpr const char* kRevisionColumns =
    "revision, config_revision, config, model, dimensions, store_id, state, created_at,"
    " completed_at";

}  // namespace

std::vector<RevisionRow> SqliteRevisionTable::list(const KbRef& kb) const {
  Stmt s(*stmts_, std::string("SELECT ") + kRevisionColumns +
                      " FROM revisions WHERE kb_id = ? ORDER BY created_at, revision");
  s.bind(1, kb.id);
  std::vector<RevisionRow> out;
  while (s.step()) out.push_back(read_revision(s));
  return out;
}

std::optional<RevisionRow> SqliteRevisionTable::in_state(const KbRef& kb,
                                                         const std::string& state) const {
  Stmt s(*stmts_,
         std::string("SELECT ") + kRevisionColumns +
             " FROM revisions WHERE kb_id = ? AND state = ? ORDER BY created_at DESC LIMIT 1");
  s.bind(1, kb.id).bind(2, state);
  if (!s.step()) return std::nullopt;
  return read_revision(s);
}

void SqliteRevisionTable::put(const KbRef& kb, const RevisionRow& r) {
  Stmt s(*stmts_,
         "INSERT OR REPLACE INTO revisions(kb_id, revision, config_revision, config, model,"
         " dimensions, store_id, state, created_at, completed_at)"
         " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind(1, kb.id)
      .bind(2, r.revision)
      .bind(3, r.config_revision)
      .bind(4, r.config_json)
      .bind(5, r.model)
      .bind(6, r.dimensions)
      .bind(7, r.store_id)
      .bind(8, r.state)
      .bind(9, r.created_at ? r.created_at : core::now_ms());
  if (r.completed_at)
    s.bind(10, r.completed_at);
  else
    s.bind_null(10);
  s.exec();
  bump_vector_generation(db_, kb.id);
}

void SqliteRevisionTable::remove(const KbRef& kb, const std::string& revision) {
  Transaction tx(db_);
  for (const char* t : {"revisions", "coordinates", "embed_failures", "staged_chunks"})
    Stmt(*stmts_, std::string("DELETE FROM ") + t + " WHERE kb_id = ? AND revision = ?")
        .bind(1, kb.id)
        .bind(2, revision)
        .exec();
  bump_vector_generation(db_, kb.id);
  tx.commit();
}

void SqliteRevisionTable::move_coordinates(const KbRef& kb, const std::string& revision,
                                           const std::string& store_id) {
  Stmt(*stmts_, "UPDATE coordinates SET store_id = ? WHERE kb_id = ? AND revision = ?")
      .bind(1, store_id)
      .bind(2, kb.id)
      .bind(3, revision)
      .exec();
}

void SqliteRevisionTable::put_coordinates(const KbRef& kb, const CoordinatesRow& c) {
  Transaction tx(db_);
  Stmt(*stmts_,
       "INSERT OR REPLACE INTO coordinates(kb_id, doc_id, revision, store_id, chunk_count,"
       " content_sha256, model, dimensions, embedded_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, kb.id)
      .bind(2, c.doc_id)
      .bind(3, c.revision)
      .bind(4, c.store_id)
      .bind(5, c.chunk_count)
      .bind(6, c.content_sha256)
      .bind(7, c.model)
      .bind(8, c.dimensions)
      .bind(9, c.embedded_at ? c.embedded_at : core::now_ms())
      .exec();
  Stmt(*stmts_, "DELETE FROM embed_failures WHERE kb_id = ? AND revision = ? AND doc_id = ?")
      .bind(1, kb.id)
      .bind(2, c.revision)
      .bind(3, c.doc_id)
      .exec();
  bump_vector_generation(db_, kb.id);
  tx.commit();
}

std::vector<CoordinatesRow> SqliteRevisionTable::coordinates_of(const KbRef& kb,
                                                                const std::string& doc_id) const {
  Stmt s(*stmts_,
         "SELECT doc_id, revision, store_id, chunk_count, content_sha256, model, dimensions,"
         " embedded_at FROM coordinates WHERE kb_id = ? AND doc_id = ? ORDER BY embedded_at");
  s.bind(1, kb.id).bind(2, doc_id);
  std::vector<CoordinatesRow> out;
  while (s.step()) {
    CoordinatesRow c;
    c.doc_id = s.str(0);
    c.revision = s.str(1);
    c.store_id = s.str(2);
    c.chunk_count = static_cast<int>(s.i64(3));
    c.content_sha256 = s.str(4);
    c.model = s.str(5);
    c.dimensions = static_cast<int>(s.i64(6));
    c.embedded_at = s.i64(7);
    out.push_back(std::move(c));
  }
  return out;
}

void SqliteRevisionTable::delete_coordinates(const KbRef& kb, const std::string& doc_id) {
  Transaction tx(db_);
  for (const char* t : {"coordinates", "embed_failures", "staged_chunks"})
    Stmt(*stmts_, std::string("DELETE FROM ") + t + " WHERE kb_id = ? AND doc_id = ?")
        .bind(1, kb.id)
        .bind(2, doc_id)
        .exec();
  bump_vector_generation(db_, kb.id);
  tx.commit();
}

std::vector<std::string> SqliteRevisionTable::orphaned_coordinates(const KbRef& kb) const {
  Stmt s(*stmts_,
         "SELECT DISTINCT c.doc_id FROM coordinates c WHERE c.kb_id = ? AND NOT EXISTS"
         " (SELECT 1 FROM documents d WHERE d.id = c.doc_id AND d.kb_id = c.kb_id)");
  s.bind(1, kb.id);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.str(0));
  return out;
}

std::vector<PendingDocument> SqliteRevisionTable::pending(const KbRef& kb,
                                                          const std::string& revision, int limit,
                                                          const PendingDocument* after,
                                                          std::int64_t updated_since) const {
  // Both bounds are ranges of the index documents_by_recency (the row value included).
  Stmt s(*stmts_,
         std::string("SELECT d.id, d.content_sha256, d.updated_at FROM documents d"
                     " WHERE d.kb_id = ?1") +
             (after ? " AND (d.updated_at, d.id) < (?4, ?5)" : "") +
             (updated_since >= 0 ? " AND d.updated_at >= ?6" : "") +
             " AND NOT EXISTS (SELECT 1 FROM coordinates c WHERE c.kb_id = ?1 AND c.revision = ?2"
             "   AND c.doc_id = d.id AND c.content_sha256 = d.content_sha256)"
             " AND NOT EXISTS (SELECT 1 FROM embed_failures f WHERE f.kb_id = ?1 AND"
             "   f.revision = ?2 AND f.doc_id = d.id AND f.content_sha256 = d.content_sha256)"
             " ORDER BY d.updated_at DESC, d.id DESC LIMIT ?3");
  s.bind(1, kb.id).bind(2, revision).bind(3, limit);
  if (after) s.bind(4, after->updated_at).bind(5, after->doc_id);
  if (updated_since >= 0) s.bind(6, updated_since);
  std::vector<PendingDocument> out;
  while (s.step()) out.push_back({s.str(0), s.str(1), s.i64(2)});
  return out;
}

VectorCounts SqliteRevisionTable::counts(const KbRef& kb, const std::string& revision,
                                         const std::string& older,
                                         const core::Filter& filter) const {
  SqlFilter f = compile_filter(filter, "d");
  Stmt s(*stmts_,
         "SELECT COUNT(*),"
         " COALESCE(SUM(EXISTS (SELECT 1 FROM coordinates c WHERE c.kb_id = ?1 AND"
         "   c.revision = ?2 AND c.doc_id = d.id AND c.content_sha256 = d.content_sha256)), 0),"
         " COALESCE(SUM(EXISTS (SELECT 1 FROM embed_failures e WHERE e.kb_id = ?1 AND"
         "   e.revision = ?2 AND e.doc_id = d.id AND e.content_sha256 = d.content_sha256)), 0),"
         " COALESCE(SUM(?3 <> '' AND EXISTS (SELECT 1 FROM coordinates o WHERE o.kb_id = ?1 AND"
         "   o.revision = ?3 AND o.doc_id = d.id AND o.content_sha256 = d.content_sha256)"
         "   AND NOT EXISTS (SELECT 1 FROM coordinates c WHERE c.kb_id = ?1 AND"
         "   c.revision = ?2 AND c.doc_id = d.id AND c.content_sha256 = d.content_sha256)), 0)"
         " FROM documents d WHERE d.kb_id = ?1 AND " +
             f.sql);
  s.bind(1, kb.id).bind(2, revision).bind(3, older);
  bind_filter(s, f, 4);
  s.step();
  return VectorCounts{s.i64(0), s.i64(1), s.i64(2), s.i64(3)};
}

void SqliteRevisionTable::put_failure(const KbRef& kb, const FailureRow& f) {
  Stmt(*stmts_,
       "INSERT OR REPLACE INTO embed_failures(kb_id, revision, doc_id, content_sha256, code,"
       " message, at) VALUES(?, ?, ?, ?, ?, ?, ?)")
      .bind(1, kb.id)
      .bind(2, f.revision)
      .bind(3, f.doc_id)
      .bind(4, f.content_sha256)
      .bind(5, f.code)
      .bind(6, f.message)
      .bind(7, f.at ? f.at : core::now_ms())
      .exec();
  bump_vector_generation(db_, kb.id);
}

std::vector<FailureRow> SqliteRevisionTable::failures(const KbRef& kb, const std::string& revision,
                                                      int limit) const {
  Stmt s(*stmts_,
         "SELECT f.doc_id, f.revision, f.content_sha256, f.code, f.message, f.at"
         " FROM embed_failures f JOIN documents d ON d.id = f.doc_id AND"
         " d.content_sha256 = f.content_sha256"
         " WHERE f.kb_id = ? AND f.revision = ? ORDER BY f.at DESC LIMIT ?");
  s.bind(1, kb.id).bind(2, revision).bind(3, limit);
  std::vector<FailureRow> out;
  while (s.step()) out.push_back({s.str(0), s.str(1), s.str(2), s.str(3), s.str(4), s.i64(5)});
  return out;
}

void SqliteRevisionTable::put_staged_chunks(const KbRef& kb, const std::string& revision,
                                            const std::string& doc_id,
                                            const std::string& content_sha256,
                                            const std::vector<ChunkRow>& chunks) {
  Transaction tx(db_);
  Stmt(*stmts_, "DELETE FROM staged_chunks WHERE kb_id = ? AND revision = ? AND doc_id = ?")
      .bind(1, kb.id)
      .bind(2, revision)
      .bind(3, doc_id)
      .exec();
  Stmt ins(*stmts_,
           "INSERT INTO staged_chunks(kb_id, revision, doc_id, content_sha256, chunk_index,"
           " chunk_id, parent_chunk, heading_path, offset, length, token_count, body)"
           " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& c : chunks) {
    ins.reset();
    ins.bind(1, kb.id)
        .bind(2, revision)
        .bind(3, doc_id)
        .bind(4, content_sha256)
        .bind(5, c.index)
        .bind(6, c.chunk_id)
        .bind(7, c.parent_chunk)
        .bind(8, nlohmann::json(c.heading_path).dump())
        .bind(9, c.offset)
        .bind(10, c.length)
        .bind(11, c.token_count)
        .bind(12, c.text)
        .exec();
  }
  tx.commit();
}

std::optional<std::vector<ChunkRow>> SqliteRevisionTable::staged_chunks(
    const KbRef& kb, const std::string& revision, const std::string& doc_id,
    const std::string& content_sha256) const {
  Stmt s(*stmts_, std::string("SELECT ") + kChunkColumns +
                      " FROM staged_chunks c WHERE c.kb_id = ? AND c.revision = ? AND c.doc_id = ?"
                      " AND c.content_sha256 = ? ORDER BY c.chunk_index");
  s.bind(1, kb.id).bind(2, revision).bind(3, doc_id).bind(4, content_sha256);
  std::vector<ChunkRow> out;
  while (s.step()) out.push_back(read_chunk(s));
  if (out.empty()) return std::nullopt;
  return out;
}

void SqliteRevisionTable::cut_over(const KbRef& kb, const std::string& building,
                                   const std::string& adopt_chunking) {
  Transaction tx(db_);
  if (!adopt_chunking.empty()) {
    std::vector<std::pair<std::string, std::string>> docs;  // id, title
    {
      Stmt s(*stmts_,
             "SELECT DISTINCT d.id, d.title FROM documents d JOIN staged_chunks c ON c.kb_id ="
             " d.kb_id AND c.doc_id = d.id AND c.content_sha256 = d.content_sha256 WHERE"
             " d.kb_id = ? AND c.revision = ?");
      s.bind(1, kb.id).bind(2, building);
      while (s.step()) docs.emplace_back(s.str(0), s.str(1));
    }
    Stmt rows(*stmts_, std::string("SELECT ") + kChunkColumns +
                           " FROM staged_chunks c WHERE c.kb_id = ? AND c.revision = ? AND"
                           " c.doc_id = ? ORDER BY c.chunk_index");
    Stmt mark(*stmts_, "UPDATE documents SET chunk_count = ?, chunking = ? WHERE id = ?");
    for (const auto& [id, title] : docs) {
      std::vector<ChunkRow> chunks;
      rows.reset();
      rows.bind(1, kb.id).bind(2, building).bind(3, id);
      while (rows.step()) chunks.push_back(read_chunk(rows));
      delete_chunks(db_, kb.id, id);
      insert_chunks(db_, kb.id, id, title, chunks);
      mark.reset();
      mark.bind(1, static_cast<std::int64_t>(chunks.size())).bind(2, adopt_chunking).bind(3, id);
      mark.exec();
    }
    Stmt(*stmts_, "DELETE FROM staged_chunks WHERE kb_id = ? AND revision = ?")
        .bind(1, kb.id)
        .bind(2, building)
        .exec();
    bump_generation(db_, kb.id);
  }
  Stmt(*stmts_, "UPDATE revisions SET state = 'previous' WHERE kb_id = ? AND state = 'serving'")
      .bind(1, kb.id)
      .exec();
  Stmt(*stmts_,
       "UPDATE revisions SET state = 'serving', completed_at = ? WHERE kb_id = ? AND revision = ?")
      .bind(1, core::now_ms())
      .bind(2, kb.id)
      .bind(3, building)
      .exec();
  bump_vector_generation(db_, kb.id);
  tx.commit();
}

}  // namespace quarry::catalog
