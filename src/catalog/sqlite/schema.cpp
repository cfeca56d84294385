// Versioned migrations. Each entry runs once, in order, inside one transaction together with
// its row in schema_migrations; a migration is never edited after it shipped, only appended.
#include "catalog/sqlite/schema.h"

#include <array>

#include "catalog/sqlite/fts_tokenizer.h"
#include "catalog/sqlite/sqlite.h"
#include "core/util.h"
#include "quarry/error.h"

namespace quarry::catalog {
namespace {

constexpr std::array<const char*, 9> kMigrations = {
    // v1: knowledge bases, documents, chunks (the content of each KB's FTS5 index), audit.
    R"sql(
CREATE TABLE kbs (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  config     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE documents (
  id             TEXT PRIMARY KEY,
  kb_id          INTEGER NOT NULL REFERENCES kbs(id),
  filename       TEXT NOT NULL,
  title          TEXT NOT NULL DEFAULT '',
  source_sha256  TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,
  metadata       TEXT NOT NULL DEFAULT '{}',
  subject_key    TEXT,
  subject_value  TEXT,
  converter      TEXT NOT NULL,
  raw_ext        TEXT NOT NULL,
  source_bytes   INTEGER NOT NULL,
  markdown_bytes INTEGER NOT NULL,
  body_offset    INTEGER NOT NULL,
  chunk_count    INTEGER NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  UNIQUE (kb_id, filename)
);
CREATE INDEX documents_by_kb ON documents(kb_id, id);
CREATE TABLE chunks (
  id           INTEGER PRIMARY KEY,
  kb_id        INTEGER NOT NULL,
  doc_id       TEXT NOT NULL REFERENCES documents(id),
  chunk_index  INTEGER NOT NULL,
  chunk_id     TEXT NOT NULL,
  parent_chunk TEXT,
  heading_path TEXT NOT NULL DEFAULT '[]',
  offset       INTEGER NOT NULL,
  length       INTEGER NOT NULL,
  token_count  INTEGER NOT NULL,
  title        TEXT NOT NULL DEFAULT '',
  headings     TEXT NOT NULL DEFAULT '',
  body         TEXT NOT NULL,
  UNIQUE (doc_id, chunk_index)
);
CREATE TABLE audit (
  id      INTEGER PRIMARY KEY,
  at      INTEGER NOT NULL,
  actor   TEXT NOT NULL,
  surface TEXT NOT NULL,
  action  TEXT NOT NULL,
  kb      TEXT NOT NULL DEFAULT '',
  target  TEXT NOT NULL DEFAULT '',
  details TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_by_kb ON audit(kb, id);
)sql",
    // v2: a per-KB generation, bumped by every write to the KB's documents, so caches of the
    // keyword index (memory_index.cpp) know when they are stale.
    "ALTER TABLE kbs ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;",
    // v3: listing a KB's documents for grep reads only this index (no row lookups).
    R"sql(
CREATE INDEX documents_refs ON documents(kb_id, id, filename, subject_key, subject_value);
DROP INDEX documents_by_kb;
)sql",
    // v4: the index lifecycle (SPEC §1, §7). `revisions`: the vector spaces of a KB (serving,
    // building, previous) with the config snapshot that makes them. `coordinates`: per
    // (kb, document, revision) what the store holds — the platform's whole knowledge of a
    // store's contents; a row is written only after the store committed the vectors, and
    // survives the document's deletion until the store has forgotten them too. `embed_failures`:
    // permanent failures tombstoned by (content hash, revision). Pending work is derived from
    // these (documents without current coordinates), so it can never be lost.
    R"sql(
CREATE TABLE revisions (
  kb_id           INTEGER NOT NULL,
  revision        TEXT NOT NULL,
  config_revision TEXT NOT NULL,
  config          TEXT NOT NULL,
  model           TEXT NOT NULL,
  dimensions      INTEGER NOT NULL,
  store_id        TEXT NOT NULL,
  state           TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  completed_at    INTEGER,
  PRIMARY KEY (kb_id, revision)
);
CREATE TABLE coordinates (
  kb_id          INTEGER NOT NULL,
  doc_id         TEXT NOT NULL,
  revision       TEXT NOT NULL,
  store_id       TEXT NOT NULL,
  chunk_count    INTEGER NOT NULL,
  content_sha256 TEXT NOT NULL,
  model          TEXT NOT NULL,
  dimensions     INTEGER NOT NULL,
  embedded_at    INTEGER NOT NULL,
  PRIMARY KEY (kb_id, revision, doc_id)
);
CREATE INDEX coordinates_by_doc ON coordinates(kb_id, doc_id);
CREATE TABLE embed_failures (
  kb_id          INTEGER NOT NULL,
  revision       TEXT NOT NULL,
  doc_id         TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,
  code           TEXT NOT NULL,
  message        TEXT NOT NULL,
  at             INTEGER NOT NULL,
  PRIMARY KEY (kb_id, revision, doc_id)
);
CREATE INDEX documents_by_recency ON documents(kb_id, updated_at DESC, id);
ALTER TABLE kbs ADD COLUMN vector_generation INTEGER NOT NULL DEFAULT 0;
)sql",
    // v5: blue-green chunking (SPEC §7). `documents.chunking`: the config_revision its chunks
    // were cut under ('' before v5: taken as current). `staged_chunks`: a building revision's
    // chunks under its own chunking, embedded beside the serving ones and made the document's
    // chunks at the cut-over, in one transaction.
    R"sql(
ALTER TABLE documents ADD COLUMN chunking TEXT NOT NULL DEFAULT '';
CREATE TABLE staged_chunks (
  kb_id          INTEGER NOT NULL,
  revision       TEXT NOT NULL,
  doc_id         TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,
  chunk_index    INTEGER NOT NULL,
  chunk_id       TEXT NOT NULL,
  parent_chunk   TEXT,
  heading_path   TEXT NOT NULL DEFAULT '[]',
  offset         INTEGER NOT NULL,
  length         INTEGER NOT NULL,
  token_count    INTEGER NOT NULL,
  body           TEXT NOT NULL,
  PRIMARY KEY (kb_id, revision, doc_id, chunk_index)
);
)sql",
    // v6: bearer tokens of the server (SPEC §10). Only a SHA-256 of the secret is kept (the
    // secret is 256 random bits, so a plain hash is enough); `kbs` restricts a token to some
    // knowledge bases ('[]' = all).
    R"sql(
CREATE TABLE tokens (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  scope        TEXT NOT NULL CHECK (scope IN ('read', 'write', 'admin')),
  kbs          TEXT NOT NULL DEFAULT '[]',
  secret_hash  TEXT NOT NULL UNIQUE,
  created_at   INTEGER NOT NULL,
  revoked_at   INTEGER
);
)sql",
    // v7: the embedding pump (SPEC §8). One row per deployed use case: its validated config and
    // run state (attempts, parked, pending trigger, lease); tombstones by (content hash, revision).
    R"sql(
CREATE TABLE pump_use_cases (
  name            TEXT PRIMARY KEY,
  config          TEXT NOT NULL,
  config_revision TEXT NOT NULL,
  embedder        TEXT NOT NULL DEFAULT '',
  deployed_at     INTEGER NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  parked          INTEGER NOT NULL DEFAULT 0,
  pending         INTEGER NOT NULL DEFAULT 0,
  next_run_at     INTEGER NOT NULL DEFAULT 0,
  last_run_at     INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT NOT NULL DEFAULT '',
  last_failed     INTEGER NOT NULL DEFAULT 0,
  last_skipped    INTEGER NOT NULL DEFAULT 0,
  lease_owner     TEXT NOT NULL DEFAULT '',
  lease_at        INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE pump_tombstones (
  use_case     TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  revision     TEXT NOT NULL,
  code         TEXT NOT NULL,
  message      TEXT NOT NULL,
  at           INTEGER NOT NULL,
  PRIMARY KEY (use_case, content_hash, revision)
);
CREATE INDEX pump_tombstones_by_age ON pump_tombstones(use_case, at DESC);
)sql",
    // v8: the pump's usage entries (one per provider batch of up to 128 chunks, and one per
    // query-time embedding) and its settings (the optional monthly spend budget).
    R"sql(
CREATE TABLE pump_usage (
  use_case TEXT NOT NULL,
  at       INTEGER NOT NULL,
  chunks   INTEGER NOT NULL,
  kind     TEXT NOT NULL CHECK (kind IN ('run', 'embed'))
);
CREATE INDEX pump_usage_by_time ON pump_usage(at);
CREATE TABLE pump_settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
)sql",
    // v9: each KB's keyword index records its tokenizer (the FTS5 tokenize argument it was
    // built with, fts_tokenizer.h). KBs made before keep the one every KB had.
    "ALTER TABLE kbs ADD COLUMN keyword_tokenizer TEXT NOT NULL"
    " DEFAULT 'porter unicode61 remove_diacritics 2';",
};

}  // namespace

int latest_schema_version() {
  return static_cast<int>(kMigrations.size());
}

namespace {
int applied_version(sqlite3* db) {
  Stmt cur(db, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  cur.step();
  return static_cast<int>(cur.i64(0));
}
}  // namespace

void migrate(sqlite3* db) {
  exec_sql(db,
           "CREATE TABLE IF NOT EXISTS schema_migrations ("
           " version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
  // Up to date (every open but the first after an upgrade): a plain read, so opening a data
  // dir never queues behind another process's write transaction.
  if (applied_version(db) >= latest_schema_version()) return;
  Transaction tx(db);
  for (int v = applied_version(db) + 1; v <= latest_schema_version(); ++v) {
    exec_sql(db, kMigrations[static_cast<std::size_t>(v - 1)]);
    Stmt(db, "INSERT INTO schema_migrations(version, applied_at) VALUES(?, ?)")
        .bind(1, v)
        .bind(2, core::now_ms())
        .exec();
  }
  tx.commit();
}

std::string fts_table(std::int64_t kb_id) {
  return "fts_" + std::to_string(kb_id);
}

void create_fts(sqlite3* db, std::int64_t kb_id, const std::string& tokenize) {
  // External-content FTS5 over the chunks table: the text is stored once (in chunks) and
  // snippet() reads it from there. `tokenize` is made by fts_tokenize_of_config (no quotes).
  if (tokenize.find('\'') != std::string::npos)
    throw Error(Code::internal, "invalid FTS5 tokenize argument: " + tokenize);
  std::string sql = "CREATE VIRTUAL TABLE " + fts_table(kb_id) +
                    " USING fts5(title, headings, body, content='chunks', content_rowid='id',"
                    " tokenize='" +
                    tokenize + "')";
  exec_sql(db, sql.c_str());
}

void drop_fts(sqlite3* db, std::int64_t kb_id) {
  std::string sql = "DROP TABLE IF EXISTS " + fts_table(kb_id);
  exec_sql(db, sql.c_str());
}

}  // namespace quarry::catalog
