// Knowledge bases (kb_table.h) in SQLite: the kbs table, each KB's FTS5 table created and
// dropped with it (and rebuilt when its keyword settings change), and the generation counters.
#include "catalog/sqlite/fts_tokenizer.h"
#include "catalog/sqlite/schema.h"
#include "catalog/sqlite/tables.h"
#include "catalog/sqlite/writes.h"
#include "core/util.h"
#include "quarry/error.h"

namespace quarry::catalog {

namespace {

KbRow read_kb(const Stmt& s) {
  return KbRow{s.i64(0), s.str(1), s.str(2), s.i64(3), s.i64(4)};
}

// The KB's keyword index made anew with `tokenize` from its chunks, in the caller's write
// transaction: readers (WAL) go on reading the old index until it commits, and the generation
// bump retires the in-memory copies built with the old tokenizer.
void rebuild_keyword_index(sqlite3* db, std::int64_t kb_id, const std::string& tokenize) {
  drop_fts(db, kb_id);
  create_fts(db, kb_id, tokenize);
  const std::string fts = fts_table(kb_id);
  Stmt(db, "INSERT INTO " + fts +
               "(rowid, title, headings, body) SELECT id, title, headings, body FROM chunks"
               " WHERE kb_id = ? ORDER BY id")
      .bind(1, kb_id)
      .exec();
  Stmt(db, "UPDATE kbs SET keyword_tokenizer = ?, generation = generation + 1 WHERE id = ?")
      .bind(1, tokenize)
      .bind(2, kb_id)
      .exec();
}

}  // namespace

KbRow SqliteKbTable::create(const std::string& name, const std::string& config_json,
                            const AuditEntry& a) {
  Transaction tx(db_);
  if (find(name))
    throw Error(Code::already_exists,
                "knowledge base '" + name +
                    "' already exists: pick another name, or delete it "
                    "first with `quarry kb delete " +
                    name + " --yes`",
                {{"kb", name}});
  auto now = core::now_ms();
  const std::string tokenize = fts_tokenize_of_config(config_json);
  Stmt(*stmts_,
       "INSERT INTO kbs(name, config, created_at, updated_at, keyword_tokenizer)"
       " VALUES(?, ?, ?, ?, ?)")
      .bind(1, name)
      .bind(2, config_json)
      .bind(3, now)
      .bind(4, now)
      .bind(5, tokenize)
      .exec();
  std::int64_t id = sqlite3_last_insert_rowid(db_);
  create_fts(db_, id, tokenize);
  write_audit(db_, a);
  tx.commit();
  return KbRow{id, name, config_json, now, now};
}

std::optional<KbRow> SqliteKbTable::find(const std::string& name) const {
  Stmt s(*stmts_, "SELECT id, name, config, created_at, updated_at FROM kbs WHERE name = ?");
  s.bind(1, name);
  if (!s.step()) return std::nullopt;
  return read_kb(s);
}

KbRow SqliteKbTable::get(const std::string& name) const {
  auto kb = find(name);
  if (!kb) throw_kb_not_found(name);
  return *kb;
}

std::vector<KbRow> SqliteKbTable::list() const {
  Stmt s(*stmts_, "SELECT id, name, config, created_at, updated_at FROM kbs ORDER BY name");
  std::vector<KbRow> out;
  while (s.step()) out.push_back(read_kb(s));
  return out;
}

void SqliteKbTable::update_config(const KbRef& kb, const std::string& config_json,
                                  const AuditEntry& a) {
  Transaction tx(db_);
  Stmt(*stmts_, "UPDATE kbs SET config = ?, updated_at = ? WHERE id = ?")
      .bind(1, config_json)
      .bind(2, core::now_ms())
      .bind(3, kb.id)
      .exec();
  const std::string tokenize = fts_tokenize_of_config(config_json);
  if (tokenize != d_.keyword_tokenize(kb.id, kb.name)) rebuild_keyword_index(db_, kb.id, tokenize);
  write_audit(db_, a);
  tx.commit();
}

std::vector<std::string> SqliteKbTable::remove(const KbRef& kb, const AuditEntry& a) {
  Transaction tx(db_);
  std::vector<std::string> ids;
  {
    Stmt s(*stmts_, "SELECT id FROM documents WHERE kb_id = ?");
    s.bind(1, kb.id);
    while (s.step()) ids.push_back(s.str(0));
  }
  drop_fts(db_, kb.id);
  Stmt(*stmts_, "DELETE FROM chunks WHERE kb_id = ?").bind(1, kb.id).exec();
  Stmt(*stmts_, "DELETE FROM documents WHERE kb_id = ?").bind(1, kb.id).exec();
  Stmt(*stmts_, "DELETE FROM kbs WHERE id = ?").bind(1, kb.id).exec();
  // The store's vectors of a deleted KB are dropped by name right after this commits (and
  // again before a KB of the same name is created), so no lifecycle row need outlive it.
  for (const char* t : {"revisions", "coordinates", "embed_failures", "staged_chunks"})
    Stmt(*stmts_, std::string("DELETE FROM ") + t + " WHERE kb_id = ?").bind(1, kb.id).exec();
  write_audit(db_, a);
  tx.commit();
  return ids;
}

KbStats SqliteKbTable::stats(const KbRef& kb) const {
  Stmt s(*stmts_,
         "SELECT COUNT(*), COALESCE(SUM(chunk_count), 0), COALESCE(SUM(markdown_bytes), 0),"
         " COALESCE(SUM(source_bytes), 0) FROM documents WHERE kb_id = ?");
  s.bind(1, kb.id).step();
  return KbStats{s.i64(0), s.i64(1), s.i64(2), s.i64(3)};
}

std::int64_t SqliteKbTable::chunk_count(const KbRef& kb) const {
  const std::int64_t generation = generations(kb).first;
  auto it = d_.chunk_counts.find(kb.id);
  if (it != d_.chunk_counts.end() && it->second.first == generation) return it->second.second;
  Stmt n(*stmts_, "SELECT COALESCE(SUM(chunk_count), 0) FROM documents WHERE kb_id = ?");
  n.bind(1, kb.id).step();
  d_.chunk_counts[kb.id] = {generation, n.i64(0)};
  return n.i64(0);
}

std::pair<std::int64_t, std::int64_t> SqliteKbTable::generations(const KbRef& kb) const {
  Stmt s(*stmts_, "SELECT generation, vector_generation FROM kbs WHERE id = ?");
  s.bind(1, kb.id);
  if (!s.step()) throw_kb_not_found(kb.name);
  return {s.i64(0), s.i64(1)};
}

}  // namespace quarry::catalog
