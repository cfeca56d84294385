#include "store/embedded/db.h"

#include <chrono>
#include <cstring>
#include <map>
#include <random>

#include "quarry/error.h"

namespace quarry::store::embedded {
namespace {

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS scopes(
  kb TEXT NOT NULL, revision TEXT NOT NULL, dims INTEGER NOT NULL, epoch INTEGER NOT NULL,
  seq INTEGER NOT NULL, tomb_floor INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(kb, revision)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS docs(
  kb TEXT NOT NULL, revision TEXT NOT NULL, doc_id TEXT NOT NULL, metadata TEXT NOT NULL,
  seq INTEGER NOT NULL, PRIMARY KEY(kb, revision, doc_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS docs_by_seq ON docs(kb, revision, seq);
CREATE INDEX IF NOT EXISTS docs_by_id ON docs(kb, doc_id);
CREATE TABLE IF NOT EXISTS vectors(
  id INTEGER PRIMARY KEY AUTOINCREMENT, kb TEXT NOT NULL, revision TEXT NOT NULL,
  doc_id TEXT NOT NULL, chunk_index INTEGER NOT NULL, chunk_id TEXT NOT NULL,
  vector BLOB NOT NULL, UNIQUE(kb, revision, doc_id, chunk_index));
-- Delta reads "id > ?" seek straight to the new rows, and the index keys' metadata (id, doc,
-- chunk) is read from this index alone (covering): a scope's second query used to walk every
-- row of the table, vectors included (~150 MB at 100k x 384), to load it.
CREATE INDEX IF NOT EXISTS vectors_keys ON vectors(kb, revision, id, doc_id, chunk_index, chunk_id);
DROP INDEX IF EXISTS vectors_by_scope;  -- (kb, revision): what vectors_keys replaced
CREATE TABLE IF NOT EXISTS tombstones(
  kb TEXT NOT NULL, revision TEXT NOT NULL, seq INTEGER NOT NULL, vec_id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS tombstones_by_seq ON tombstones(kb, revision, seq);
)sql";

// Binds, steps and resets one cached statement.
class Q {
 public:
  explicit Q(sqlite3_stmt* s) : s_(s) {}
  ~Q() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  Q& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Q& bind(int i, std::int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Q& bind_blob(int i, const void* p, std::size_t n) {
    sqlite3_bind_blob(s_, i, p, static_cast<int>(n), SQLITE_TRANSIENT);
    return *this;
  }
  bool row() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw Error(Code::io_error,
                std::string("vector store: ") + sqlite3_errmsg(sqlite3_db_handle(s_)));
  }
  void run() {
    while (row()) {
    }
  }
  std::int64_t i64(int c) { return sqlite3_column_int64(s_, c); }
  std::string text(int c) {
    auto p = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, c))) : "";
  }
  const void* blob(int c) { return sqlite3_column_blob(s_, c); }
  std::size_t bytes(int c) { return static_cast<std::size_t>(sqlite3_column_bytes(s_, c)); }

 private:
  sqlite3_stmt* s_;
};

std::int64_t new_epoch() {
  std::random_device rd;
  auto t = std::chrono::system_clock::now().time_since_epoch().count();
  return static_cast<std::int64_t>(
      ((static_cast<std::uint64_t>(rd()) << 31) ^ static_cast<std::uint64_t>(t)) &
      0x3fffffffffffffffull);
}

[[noreturn]] void mismatch(std::size_t got, int want) {
  throw Error(Code::dimension_mismatch,
              "vector has " + std::to_string(got) + " dimensions but the scope holds " +
                  std::to_string(want) + "-dimensional vectors",
              {{"expected", std::to_string(want)}, {"actual", std::to_string(got)}});
}

}  // namespace

// Rolls back unless committed; `begin` is BEGIN (read) or BEGIN IMMEDIATE (write).
class Txn {
 public:
  Txn(sqlite3* db, const char* begin) : db_(db) { exec(begin); }
  ~Txn() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void commit() {
    exec("COMMIT");
    done_ = true;
  }

 private:
  void exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "?";
      sqlite3_free(err);
      throw Error(Code::io_error, "vector store: " + msg);
    }
  }
  sqlite3* db_;
  bool done_ = false;
};

VectorDb::VectorDb(const std::string& path) {
  // No allocation statistics (a process-wide mutex; see catalog/sqlite.cpp).
  static const int memstatus_off = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)memstatus_off;
  int rc =
      sqlite3_open_v2(path.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw Error(Code::io_error, "cannot open " + path + ": " + msg, {{"path", path}});
  }
  sqlite3_busy_timeout(db_, 30000);
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=NORMAL");
  exec(kSchema);
}

VectorDb::~VectorDb() {
  for (auto& [sql, s] : stmts_) sqlite3_finalize(s);
  sqlite3_close(db_);
}

void VectorDb::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "?";
    sqlite3_free(err);
    throw Error(Code::io_error, "vector store: " + msg);
  }
}

sqlite3_stmt* VectorDb::prepare(const char* sql) {
  for (auto& [k, s] : stmts_)
    if (k == sql) return s;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK)
    throw Error(Code::internal, std::string("vector store: ") + sqlite3_errmsg(db_));
  stmts_.emplace_back(sql, s);
  return s;
}

std::int64_t VectorDb::bump_seq(const std::string& kb, const std::string& revision) {
  Q q(prepare("UPDATE scopes SET seq = seq + 1 WHERE kb = ?1 AND revision = ?2 RETURNING seq"));
  q.bind(1, kb).bind(2, revision);
  if (!q.row()) throw Error(Code::internal, "vector store: scope row missing");
  return q.i64(0);
}

namespace {

// A document's chunks by index, after the checks every upsert makes before writing.
std::map<int, const ChunkVector*> checked_chunks(const Scope& scope, const DocumentVectors& doc) {
  std::map<int, const ChunkVector*> wanted;
  for (const auto& c : doc.chunks) {
    if (scope.dimensions > 0 && c.vector.size() != static_cast<std::size_t>(scope.dimensions))
      mismatch(c.vector.size(), scope.dimensions);
    if (c.vector.empty()) mismatch(0, scope.dimensions);
    if (c.vector.size() != doc.chunks.front().vector.size())
      mismatch(c.vector.size(), static_cast<int>(doc.chunks.front().vector.size()));
    if (!wanted.emplace(c.chunk_index, &c).second)
      throw Error(Code::invalid_argument, "chunk_index " + std::to_string(c.chunk_index) +
                                              " appears twice in document " + doc.doc_id);
  }
  return wanted;
}

}  // namespace

UpsertResult VectorDb::upsert(const Scope& scope, const DocumentVectors& doc) {
  return upsert_many(scope, &doc, 1).front();
}

// Every document is checked first; then one write transaction for all of them.
std::vector<UpsertResult> VectorDb::upsert_many(const Scope& scope, const DocumentVectors* docs,
                                                std::size_t n) {
  std::vector<std::map<int, const ChunkVector*>> wanted;
  wanted.reserve(n);
  for (std::size_t i = 0; i < n; ++i) wanted.push_back(checked_chunks(scope, docs[i]));
  std::lock_guard lock(mu_);
  Txn txn(db_, "BEGIN IMMEDIATE");
  std::vector<UpsertResult> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(write_doc(scope, docs[i], wanted[i]));
  txn.commit();
  return out;
}

UpsertResult VectorDb::write_doc(const Scope& scope, const DocumentVectors& doc,
                                 std::map<int, const ChunkVector*>& wanted) {
  const std::string meta = metadata_of(doc).dump();
  bool scope_exists = false;
  {
    Q q(prepare("SELECT dims FROM scopes WHERE kb = ?1 AND revision = ?2"));
    q.bind(1, scope.kb).bind(2, scope.revision);
    if (q.row()) {
      scope_exists = true;
      int dims = static_cast<int>(q.i64(0));
      if (!doc.chunks.empty() && doc.chunks.front().vector.size() != static_cast<std::size_t>(dims))
        mismatch(doc.chunks.front().vector.size(), dims);
    }
  }
  UpsertResult result;
  std::vector<std::int64_t> gone;
  {
    Q q(
        prepare("SELECT id, chunk_index, chunk_id, vector FROM vectors "
                "WHERE kb = ?1 AND revision = ?2 AND doc_id = ?3"));
    q.bind(1, scope.kb).bind(2, scope.revision).bind(3, doc.doc_id);
    while (q.row()) {
      auto it = wanted.find(static_cast<int>(q.i64(1)));
      bool same = it != wanted.end() && it->second->chunk_id == q.text(2) &&
                  q.bytes(3) == it->second->vector.size() * sizeof(float) &&
                  std::memcmp(q.blob(3), it->second->vector.data(), q.bytes(3)) == 0;
      if (same) {
        ++result.skipped;
        wanted.erase(it);
      } else {
        gone.push_back(q.i64(0));
      }
    }
  }
  bool meta_same = false;
  {
    Q q(prepare("SELECT metadata FROM docs WHERE kb = ?1 AND revision = ?2 AND doc_id = ?3"));
    q.bind(1, scope.kb).bind(2, scope.revision).bind(3, doc.doc_id);
    meta_same = q.row() ? q.text(0) == meta : doc.chunks.empty();
  }
  if (gone.empty() && wanted.empty() && meta_same) return result;  // nothing to write
  if (!scope_exists) {
    if (doc.chunks.empty()) return result;
    Q q(prepare("INSERT INTO scopes(kb, revision, dims, epoch, seq) VALUES(?1, ?2, ?3, ?4, 0)"));
    q.bind(1, scope.kb).bind(2, scope.revision);
    q.bind(3, static_cast<std::int64_t>(doc.chunks.front().vector.size())).bind(4, new_epoch());
    q.run();
  }
  std::int64_t seq = bump_seq(scope.kb, scope.revision);
  for (std::int64_t id : gone) {
    Q(prepare("DELETE FROM vectors WHERE id = ?1")).bind(1, id).run();
    Q q(prepare("INSERT INTO tombstones(kb, revision, seq, vec_id) VALUES(?1, ?2, ?3, ?4)"));
    q.bind(1, scope.kb).bind(2, scope.revision).bind(3, seq).bind(4, id).run();
  }
  for (const auto& [index, c] : wanted) {
    Q q(
        prepare("INSERT INTO vectors(kb, revision, doc_id, chunk_index, chunk_id, vector) "
                "VALUES(?1, ?2, ?3, ?4, ?5, ?6)"));
    q.bind(1, scope.kb).bind(2, scope.revision).bind(3, doc.doc_id).bind(4, std::int64_t{index});
    q.bind(5, c->chunk_id).bind_blob(6, c->vector.data(), c->vector.size() * sizeof(float)).run();
    ++result.written;
  }
  if (doc.chunks.empty()) {
    Q q(prepare("DELETE FROM docs WHERE kb = ?1 AND revision = ?2 AND doc_id = ?3"));
    q.bind(1, scope.kb).bind(2, scope.revision).bind(3, doc.doc_id).run();
  } else {
    Q q(
        prepare("INSERT OR REPLACE INTO docs(kb, revision, doc_id, metadata, seq) "
                "VALUES(?1, ?2, ?3, ?4, ?5)"));
    q.bind(1, scope.kb).bind(2, scope.revision).bind(3, doc.doc_id).bind(4, meta).bind(5, seq);
    q.run();
  }
  return result;
}

int VectorDb::delete_doc_rows(const std::string& kb, const std::string& revision,
                              const std::string& doc_id) {
  std::int64_t seq = bump_seq(kb, revision);
  {
    Q q(
        prepare("INSERT INTO tombstones(kb, revision, seq, vec_id) SELECT kb, revision, ?4, id "
                "FROM vectors WHERE kb = ?1 AND revision = ?2 AND doc_id = ?3"));
    q.bind(1, kb).bind(2, revision).bind(3, doc_id).bind(4, seq).run();
  }
  int n = 0;
  {
    Q q(prepare("DELETE FROM vectors WHERE kb = ?1 AND revision = ?2 AND doc_id = ?3"));
    q.bind(1, kb).bind(2, revision).bind(3, doc_id).run();
    n = sqlite3_changes(db_);
  }
  Q q(prepare("DELETE FROM docs WHERE kb = ?1 AND revision = ?2 AND doc_id = ?3"));
  q.bind(1, kb).bind(2, revision).bind(3, doc_id).run();
  return n;
}

int VectorDb::delete_document(const std::string& kb, const std::string& doc_id) {
  std::lock_guard lock(mu_);
  Txn txn(db_, "BEGIN IMMEDIATE");
  std::vector<std::string> revisions;
  {
    Q q(prepare("SELECT revision FROM docs WHERE kb = ?1 AND doc_id = ?2"));
    q.bind(1, kb).bind(2, doc_id);
    while (q.row()) revisions.push_back(q.text(0));
  }
  int n = 0;
  for (const auto& r : revisions) n += delete_doc_rows(kb, r, doc_id);
  txn.commit();
  return n;
}

int VectorDb::delete_where(const std::string& kb, const core::Filter& filter) {
  if (filter.empty())
    throw Error(Code::invalid_argument,
                "delete_where needs a non-empty filter; use delete_kb to delete everything");
  std::lock_guard lock(mu_);
  Txn txn(db_, "BEGIN IMMEDIATE");
  std::vector<std::pair<std::string, std::string>> victims;
  {
    Q q(prepare("SELECT revision, doc_id, metadata FROM docs WHERE kb = ?1"));
    q.bind(1, kb);
    while (q.row()) {
      auto meta = nlohmann::json::parse(q.text(2), nullptr, false);
      if (!meta.is_discarded() && core::filter_matches(filter, meta))
        victims.emplace_back(q.text(0), q.text(1));
    }
  }
  int n = 0;
  for (const auto& [rev, doc] : victims) n += delete_doc_rows(kb, rev, doc);
  txn.commit();
  return n;
}

int VectorDb::delete_revisions(const std::string& kb, const std::string* keep) {
  std::lock_guard lock(mu_);
  Txn txn(db_, "BEGIN IMMEDIATE");
  const std::string k = keep ? *keep : std::string();
  const std::int64_t all = keep ? 0 : 1;
  int n = 0;
  {
    Q q(prepare("SELECT count(*) FROM vectors WHERE kb = ?1 AND (?3 OR revision <> ?2)"));
    q.bind(1, kb).bind(2, k).bind(3, all);
    if (q.row()) n = static_cast<int>(q.i64(0));
  }
  for (const char* sql : {"DELETE FROM vectors WHERE kb = ?1 AND (?3 OR revision <> ?2)",
                          "DELETE FROM docs WHERE kb = ?1 AND (?3 OR revision <> ?2)",
                          "DELETE FROM tombstones WHERE kb = ?1 AND (?3 OR revision <> ?2)",
                          "DELETE FROM scopes WHERE kb = ?1 AND (?3 OR revision <> ?2)"}) {
    Q(prepare(sql)).bind(1, kb).bind(2, k).bind(3, all).run();
  }
  txn.commit();
  return n;
}

void VectorDb::purge_tombstones(const std::string& kb, const std::string& revision,
                                std::int64_t seq) {
  std::lock_guard lock(mu_);
  Txn txn(db_, "BEGIN IMMEDIATE");
  Q(prepare("DELETE FROM tombstones WHERE kb = ?1 AND revision = ?2 AND seq <= ?3"))
      .bind(1, kb)
      .bind(2, revision)
      .bind(3, seq)
      .run();
  Q(prepare("UPDATE scopes SET tomb_floor = max(tomb_floor, ?3) WHERE kb = ?1 AND revision = ?2"))
      .bind(1, kb)
      .bind(2, revision)
      .bind(3, seq)
      .run();
  txn.commit();
}

bool VectorDb::has(const Scope& scope, const std::string& doc_id) {
  std::lock_guard lock(mu_);
  Q q(prepare("SELECT 1 FROM vectors WHERE kb = ?1 AND revision = ?2 AND doc_id = ?3 LIMIT 1"));
  q.bind(1, scope.kb).bind(2, scope.revision).bind(3, doc_id);
  return q.row();
}

std::int64_t VectorDb::count(const std::string& kb, const std::string& revision) {
  std::lock_guard lock(mu_);
  return Reader(*this).count(kb, revision);
}

void VectorDb::read(const std::function<void(Reader&)>& fn) {
  std::lock_guard lock(mu_);
  Txn txn(db_, "BEGIN");
  Reader r(*this);
  fn(r);
  txn.commit();
}

std::optional<ScopeRow> VectorDb::scope_row(const std::string& kb, const std::string& rev) {
  std::lock_guard lock(mu_);
  return Reader(*this).scope(kb, rev);
}

std::vector<std::optional<RowMeta>> VectorDb::lookup(const std::vector<std::int64_t>& ids) {
  std::lock_guard lock(mu_);
  Reader r(*this);
  std::vector<std::optional<RowMeta>> out;
  for (auto id : ids) out.push_back(r.lookup(id));
  return out;
}

std::optional<ScopeRow> VectorDb::Reader::scope(const std::string& kb, const std::string& rev) {
  Q q(db_.prepare(
      "SELECT dims, epoch, seq, tomb_floor FROM scopes WHERE kb = ?1 AND revision = ?2"));
  q.bind(1, kb).bind(2, rev);
  if (!q.row()) return std::nullopt;
  return ScopeRow{static_cast<int>(q.i64(0)), q.i64(1), q.i64(2), q.i64(3)};
}

std::int64_t VectorDb::Reader::count(const std::string& kb, const std::string& rev) {
  Q q(db_.prepare("SELECT count(*) FROM vectors WHERE kb = ?1 AND revision = ?2"));
  q.bind(1, kb).bind(2, rev);
  return q.row() ? q.i64(0) : 0;
}

void VectorDb::Reader::rows(
    const std::string& kb, const std::string& rev, std::int64_t after_id,
    const std::function<void(std::int64_t, const RowMeta&, const float*, std::size_t)>& fn) {
  Q q(
      db_.prepare("SELECT id, doc_id, chunk_index, chunk_id, vector FROM vectors "
                  "WHERE kb = ?1 AND revision = ?2 AND id > ?3 ORDER BY id"));
  q.bind(1, kb).bind(2, rev).bind(3, after_id);
  RowMeta m;
  std::vector<float> v;
  while (q.row()) {
    m.doc_id = q.text(1);
    m.chunk_index = static_cast<int>(q.i64(2));
    m.chunk_id = q.text(3);
    v.resize(q.bytes(4) / sizeof(float));
    std::memcpy(v.data(), q.blob(4), v.size() * sizeof(float));  // blobs need not be aligned
    fn(q.i64(0), m, v.data(), v.size());
  }
}

void VectorDb::Reader::keys(const std::string& kb, const std::string& rev, std::int64_t max_id,
                            const std::function<void(std::int64_t, const RowMeta&)>& fn) {
  Q q(
      db_.prepare("SELECT id, doc_id, chunk_index, chunk_id FROM vectors "
                  "WHERE kb = ?1 AND revision = ?2 AND id <= ?3"));
  q.bind(1, kb).bind(2, rev).bind(3, max_id);
  RowMeta m;
  while (q.row()) {
    m.doc_id = q.text(1);
    m.chunk_index = static_cast<int>(q.i64(2));
    m.chunk_id = q.text(3);
    fn(q.i64(0), m);
  }
}

void VectorDb::Reader::docs(const std::string& kb, const std::string& rev, std::int64_t after_seq,
                            const std::function<void(const std::string&, const std::string&)>& fn) {
  Q q(db_.prepare(
      "SELECT doc_id, metadata FROM docs WHERE kb = ?1 AND revision = ?2 AND seq > ?3"));
  q.bind(1, kb).bind(2, rev).bind(3, after_seq);
  while (q.row()) fn(q.text(0), q.text(1));
}

void VectorDb::Reader::tombstones(const std::string& kb, const std::string& rev,
                                  std::int64_t after_seq,
                                  const std::function<void(std::int64_t)>& fn) {
  Q q(db_.prepare("SELECT vec_id FROM tombstones WHERE kb = ?1 AND revision = ?2 AND seq > ?3"));
  q.bind(1, kb).bind(2, rev).bind(3, after_seq);
  while (q.row()) fn(q.i64(0));
}

std::optional<RowMeta> VectorDb::Reader::lookup(std::int64_t id) {
  Q q(db_.prepare("SELECT doc_id, chunk_index, chunk_id FROM vectors WHERE id = ?1"));
  q.bind(1, id);
  if (!q.row()) return std::nullopt;
  return RowMeta{q.text(0), static_cast<int>(q.i64(1)), q.text(2)};
}

}  // namespace quarry::store::embedded
