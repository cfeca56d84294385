#include "catalog/catalog.h"

#include <nlohmann/json.hpp>

#include "catalog/filter_sql.h"
#include "catalog/fts_tokenizer.h"
#include "catalog/memory_index.h"
#include "catalog/rows.h"
#include "catalog/schema.h"
#include "catalog/sqlite.h"
#include "core/util.h"
#include "quarry/error.h"

namespace quarry::catalog {
using nlohmann::json;

namespace {

KbRow read_kb(const Stmt& s) {
  return KbRow{s.i64(0), s.str(1), s.str(2), s.i64(3), s.i64(4)};
}

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

// Removes a document's chunks from the KB's FTS index and the chunks table. External-content
// FTS5 needs the old values to delete its postings, so they are read back first.
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

void delete_document_rows(sqlite3* db, std::int64_t kb_id, const std::string& doc_id) {
  bump_generation(db, kb_id);
  delete_chunks(db, kb_id, doc_id);
  Stmt(db, "DELETE FROM documents WHERE id = ?").bind(1, doc_id).exec();
}

std::string headings_text(const std::vector<std::string>& path) {
  std::string s;
  for (const auto& h : path) {
    if (!s.empty()) s += " / ";
    s += h;
  }
  return s;
}

// Inserts a document's chunks and their keyword postings (the old ones must be gone).
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
        .bind(6, json(c.heading_path).dump())
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

}  // namespace

std::unique_ptr<Catalog> Catalog::open(const std::string& path) {
  sqlite3* db = open_wal_database(path, "catalog");
  std::unique_ptr<Catalog> cat(new Catalog(db));
  cat->path_ = path;
  exec_sql(db, "PRAGMA foreign_keys = ON");
  cat->fts5_ = fts5_api_of(db);
  register_rank_function(cat->fts5_);
  cat->tokenizer_ = std::make_unique<FtsTokenizer>(cat->fts5_);
  migrate(db);
  return cat;
}

Catalog::Catalog(sqlite3* db) : db_(db), stmts_(std::make_unique<StmtCache>(db)) {}

Catalog::ReadSnapshot::ReadSnapshot(const Catalog& c)
    : tx_(std::make_unique<ReadTransaction>(c.db_)) {}
Catalog::ReadSnapshot::~ReadSnapshot() = default;

Catalog::~Catalog() {
  tokenizer_.reset();
  stmts_.reset();  // finalized before the connection closes
  sqlite3_close_v2(db_);
}

int Catalog::schema_version() const {
  Stmt s(*stmts_, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  s.step();
  return static_cast<int>(s.i64(0));
}

KbRow Catalog::create_kb(const std::string& name, const std::string& config_json,
                         const AuditEntry& a) {
  Transaction tx(db_);
  if (find_kb(name))
    throw Error(Code::already_exists, "knowledge base '" + name + "' already exists",
                {{"kb", name}});
  auto now = core::now_ms();
  Stmt(*stmts_, "INSERT INTO kbs(name, config, created_at, updated_at) VALUES(?, ?, ?, ?)")
      .bind(1, name)
      .bind(2, config_json)
      .bind(3, now)
      .bind(4, now)
      .exec();
  std::int64_t id = sqlite3_last_insert_rowid(db_);
  create_fts(db_, id);
  write_audit(db_, a);
  tx.commit();
  return KbRow{id, name, config_json, now, now};
}

std::optional<KbRow> Catalog::find_kb(const std::string& name) const {
  Stmt s(*stmts_, "SELECT id, name, config, created_at, updated_at FROM kbs WHERE name = ?");
  s.bind(1, name);
  if (!s.step()) return std::nullopt;
  return read_kb(s);
}

KbRow Catalog::get_kb(const std::string& name) const {
  auto kb = find_kb(name);
  if (!kb)
    throw Error(Code::not_found, "knowledge base '" + name + "' not found (see `quarry kb list`)",
                {{"kb", name}});
  return *kb;
}

std::vector<KbRow> Catalog::list_kbs() const {
  Stmt s(*stmts_, "SELECT id, name, config, created_at, updated_at FROM kbs ORDER BY name");
  std::vector<KbRow> out;
  while (s.step()) out.push_back(read_kb(s));
  return out;
}

void Catalog::update_kb_config(const std::string& name, const std::string& config_json,
                               const AuditEntry& a) {
  Transaction tx(db_);
  get_kb(name);
  Stmt(*stmts_, "UPDATE kbs SET config = ?, updated_at = ? WHERE name = ?")
      .bind(1, config_json)
      .bind(2, core::now_ms())
      .bind(3, name)
      .exec();
  write_audit(db_, a);
  tx.commit();
}

std::vector<std::string> Catalog::delete_kb(const std::string& name, const AuditEntry& a) {
  Transaction tx(db_);
  KbRow kb = get_kb(name);
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

KbStats Catalog::kb_stats(const std::string& name) const {
  KbRow kb = get_kb(name);
  Stmt s(*stmts_,
         "SELECT COUNT(*), COALESCE(SUM(chunk_count), 0), COALESCE(SUM(markdown_bytes), 0),"
         " COALESCE(SUM(source_bytes), 0) FROM documents WHERE kb_id = ?");
  s.bind(1, kb.id).step();
  return KbStats{s.i64(0), s.i64(1), s.i64(2), s.i64(3)};
}

std::int64_t Catalog::chunk_count(const std::string& name) const {
  Stmt s(*stmts_, "SELECT id, generation FROM kbs WHERE name = ?");
  s.bind(1, name);
  if (!s.step()) get_kb(name);  // throws not_found
  const std::int64_t id = s.i64(0), generation = s.i64(1);
  auto it = chunk_counts_.find(id);
  if (it != chunk_counts_.end() && it->second.first == generation) return it->second.second;
  Stmt n(*stmts_, "SELECT COALESCE(SUM(chunk_count), 0) FROM documents WHERE kb_id = ?");
  n.bind(1, id).step();
  chunk_counts_[id] = {generation, n.i64(0)};
  return n.i64(0);
}

std::optional<DocumentRow> Catalog::find_document_by_filename(const std::string& kb,
                                                              const std::string& filename) const {
  Stmt s(*stmts_,
         std::string("SELECT ") + kDocColumns +
             " FROM documents d JOIN kbs k ON k.id = d.kb_id WHERE k.name = ? AND d.filename = ?");
  s.bind(1, kb).bind(2, filename);
  if (!s.step()) return std::nullopt;
  return read_doc(s);
}

std::optional<DocumentRow> Catalog::find_document(const std::string& kb,
                                                  const std::string& id) const {
  Stmt s(*stmts_,
         std::string("SELECT ") + kDocColumns +
             " FROM documents d JOIN kbs k ON k.id = d.kb_id WHERE k.name = ? AND d.id = ?");
  s.bind(1, kb).bind(2, id);
  if (!s.step()) return std::nullopt;
  return read_doc(s);
}

std::vector<DocumentRow> Catalog::list_documents(const std::string& kb, const std::string& after,
                                                 int limit, const core::Filter& filter) const {
  KbRow k = get_kb(kb);
  SqlFilter f = compile_filter(filter, "d.metadata");
  Stmt s(db_,
         std::string("SELECT ") + kDocColumns +
             " FROM documents d JOIN kbs k ON k.id = d.kb_id WHERE d.kb_id = ? AND d.id > ? AND " +
             f.sql + " ORDER BY d.id LIMIT ?");
  s.bind(1, k.id).bind(2, after);
  int next = bind_filter(s, f, 3);
  s.bind(next, limit);
  std::vector<DocumentRow> out;
  while (s.step()) out.push_back(read_doc(s));
  return out;
}

std::vector<DocumentRef> Catalog::document_refs(const std::string& kb,
                                                const core::Filter& filter) const {
  KbRow k = get_kb(kb);
  SqlFilter f = compile_filter(filter, "d.metadata");
  Stmt s(db_,
         "SELECT d.id, d.filename, d.subject_key, d.subject_value FROM documents d"
         " WHERE d.kb_id = ? AND " +
             f.sql + " ORDER BY d.id");
  s.bind(1, k.id);
  bind_filter(s, f, 2);
  std::vector<DocumentRef> out;
  while (s.step()) out.push_back({s.str(0), s.str(1), s.opt_str(2), s.opt_str(3)});
  return out;
}

void Catalog::put_document(const DocumentRow& doc, const std::vector<ChunkRow>& chunks,
                           const AuditEntry& a) {
  Transaction tx(db_);
  KbRow kb = get_kb(doc.kb);
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

bool Catalog::delete_document(const std::string& kb, const std::string& id, const AuditEntry& a) {
  Transaction tx(db_);
  KbRow k = get_kb(kb);
  if (!find_document(kb, id)) return false;
  delete_document_rows(db_, k.id, id);
  write_audit(db_, a);
  tx.commit();
  return true;
}

std::vector<std::string> Catalog::delete_where(const std::string& kb, const core::Filter& filter,
                                               const AuditEntry& a) {
  if (filter.empty())
    throw Error(Code::invalid_argument,
                "delete_where needs a non-empty filter (use `kb delete` to drop everything)",
                {{"field", "filter"}});
  Transaction tx(db_);
  KbRow k = get_kb(kb);
  SqlFilter f = compile_filter(filter, "d.metadata");
  std::vector<std::string> ids;
  {
    Stmt s(db_, "SELECT d.id FROM documents d WHERE d.kb_id = ? AND " + f.sql);
    s.bind(1, k.id);
    bind_filter(s, f, 2);
    while (s.step()) ids.push_back(s.str(0));
  }
  for (const auto& id : ids) delete_document_rows(db_, k.id, id);
  AuditEntry entry = a;
  entry.details_json = json{{"deleted", ids}}.dump();
  write_audit(db_, entry);
  tx.commit();
  return ids;
}

std::vector<ChunkRow> Catalog::chunks_of(const std::string& kb, const std::string& doc_id) const {
  KbRow k = get_kb(kb);
  Stmt s(*stmts_, std::string("SELECT ") + kChunkColumns +
                      " FROM chunks c WHERE c.kb_id = ? AND c.doc_id = ? ORDER BY c.chunk_index");
  s.bind(1, k.id).bind(2, doc_id);
  std::vector<ChunkRow> out;
  while (s.step()) out.push_back(read_chunk(s));
  return out;
}

std::int64_t Catalog::count_documents_matching(const std::string& kb,
                                               const core::Filter& filter) const {
  KbRow k = get_kb(kb);
  SqlFilter f = compile_filter(filter, "d.metadata");
  Stmt s(db_, "SELECT COUNT(*) FROM documents d WHERE d.kb_id = ? AND " + f.sql);
  s.bind(1, k.id);
  bind_filter(s, f, 2);
  s.step();
  return s.i64(0);
}

bool Catalog::has_documents(const std::string& kb, const core::Filter& filter) const {
  KbRow k = get_kb(kb);
  SqlFilter f = compile_filter(filter, "d.metadata");
  Stmt s(db_, "SELECT EXISTS(SELECT 1 FROM documents d WHERE d.kb_id = ? AND " + f.sql + ")");
  s.bind(1, k.id);
  bind_filter(s, f, 2);
  s.step();
  return s.i64(0) != 0;
}

void Catalog::replace_chunks(const std::string& kb, const std::string& doc_id,
                             const std::string& chunking, const std::vector<ChunkRow>& chunks) {
  Transaction tx(db_);
  KbRow k = get_kb(kb);
  auto doc = find_document(kb, doc_id);
  if (!doc) return;
  delete_chunks(db_, k.id, doc_id);
  insert_chunks(db_, k.id, doc_id, doc->title, chunks);
  Stmt(*stmts_, "UPDATE documents SET chunk_count = ?, chunking = ? WHERE id = ?")
      .bind(1, static_cast<std::int64_t>(chunks.size()))
      .bind(2, chunking)
      .bind(3, doc_id)
      .exec();
  bump_generation(db_, k.id);
  tx.commit();
}

void Catalog::cut_over_revision(const std::string& kb, const std::string& building,
                                const std::string& adopt_chunking) {
  Transaction tx(db_);
  KbRow k = get_kb(kb);
  if (!adopt_chunking.empty()) {
    std::vector<std::pair<std::string, std::string>> docs;  // id, title
    {
      Stmt s(*stmts_,
             "SELECT DISTINCT d.id, d.title FROM documents d JOIN staged_chunks c ON c.kb_id ="
             " d.kb_id AND c.doc_id = d.id AND c.content_sha256 = d.content_sha256 WHERE"
             " d.kb_id = ? AND c.revision = ?");
      s.bind(1, k.id).bind(2, building);
      while (s.step()) docs.emplace_back(s.str(0), s.str(1));
    }
    Stmt rows(*stmts_, std::string("SELECT ") + kChunkColumns +
                           " FROM staged_chunks c WHERE c.kb_id = ? AND c.revision = ? AND"
                           " c.doc_id = ? ORDER BY c.chunk_index");
    Stmt mark(*stmts_, "UPDATE documents SET chunk_count = ?, chunking = ? WHERE id = ?");
    for (const auto& [id, title] : docs) {
      std::vector<ChunkRow> chunks;
      rows.reset();
      rows.bind(1, k.id).bind(2, building).bind(3, id);
      while (rows.step()) chunks.push_back(read_chunk(rows));
      delete_chunks(db_, k.id, id);
      insert_chunks(db_, k.id, id, title, chunks);
      mark.reset();
      mark.bind(1, static_cast<std::int64_t>(chunks.size())).bind(2, adopt_chunking).bind(3, id);
      mark.exec();
    }
    Stmt(*stmts_, "DELETE FROM staged_chunks WHERE kb_id = ? AND revision = ?")
        .bind(1, k.id)
        .bind(2, building)
        .exec();
    bump_generation(db_, k.id);
  }
  Stmt(*stmts_, "UPDATE revisions SET state = 'previous' WHERE kb_id = ? AND state = 'serving'")
      .bind(1, k.id)
      .exec();
  Stmt(*stmts_,
       "UPDATE revisions SET state = 'serving', completed_at = ? WHERE kb_id = ? AND revision = ?")
      .bind(1, core::now_ms())
      .bind(2, k.id)
      .bind(3, building)
      .exec();
  Stmt(*stmts_, "UPDATE kbs SET vector_generation = vector_generation + 1 WHERE id = ?")
      .bind(1, k.id)
      .exec();
  tx.commit();
}

Catalog::Batch::Batch(Catalog& c) : tx_(std::make_unique<Transaction>(c.db_)) {}
Catalog::Batch::~Batch() = default;
void Catalog::Batch::commit() {
  tx_->commit();
}

std::int64_t Catalog::local_changes() const {
  return sqlite3_total_changes64(db_);
}

void Catalog::log_event(const AuditEntry& a) {
  write_audit(db_, a);
}

std::vector<AuditRow> Catalog::list_audit(int limit, const std::string& kb) const {
  return list_audit_before(limit, kb, 0);
}

}  // namespace quarry::catalog
