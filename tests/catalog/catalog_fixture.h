// Shared helpers for the catalog tests: a catalog in its own TempDir and row builders.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/sqlite/schema.h"
#include "catalog/sqlite/sqlite_catalog.h"
#include "core/util.h"
#include "test_util.h"

namespace quarry::catalog::testing_support {

// A KB of `c` by name, as a request resolves it.
inline KbRef ref(const Catalog& c, const std::string& kb) {
  return c.kbs().get(kb).ref();
}

inline AuditEntry who(const std::string& action, const std::string& kb = "",
                      const std::string& target = "") {
  AuditEntry a;
  a.actor = "tester";
  a.surface = "library";
  a.action = action;
  a.kb = kb;
  a.target = target;
  return a;
}

inline DocumentRow make_doc(const std::string& kb, const std::string& filename,
                            const std::string& metadata = "{}", std::string id = "") {
  DocumentRow d;
  d.id = id.empty() ? core::new_ulid() : std::move(id);
  d.kb = kb;
  d.filename = filename;
  d.title = filename;
  d.source_sha256 = core::sha256_hex(filename);
  d.content_sha256 = core::sha256_hex(filename + "#md");
  d.metadata_json = metadata;
  d.converter = "markdown";
  d.raw_ext = "md";
  d.source_bytes = 100;
  d.markdown_bytes = 150;
  d.body_offset = 50;
  d.created_at = core::now_ms();
  d.updated_at = d.created_at;
  return d;
}

inline std::vector<ChunkRow> make_chunks(const std::vector<std::string>& texts) {
  std::vector<ChunkRow> out;
  std::int64_t offset = 50;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    ChunkRow c;
    c.index = static_cast<int>(i);
    c.chunk_id = core::new_uuid();
    c.heading_path = {"Section " + std::to_string(i)};
    c.offset = offset;
    c.length = static_cast<std::int64_t>(texts[i].size());
    c.token_count = 5;
    c.text = texts[i];
    offset += c.length + 2;
    out.push_back(std::move(c));
  }
  return out;
}

// Ranked rows of a keyword query with their document and chunk loaded.
inline std::vector<KeywordRow> keyword_rows(const Catalog& cat, const std::string& kb,
                                            const KeywordQuery& q) {
  auto rows = cat.keyword().search(ref(cat, kb), q);
  cat.keyword().load_rows(rows.data(), rows.data() + rows.size());
  for (const auto& r : rows) EXPECT_TRUE(r.loaded) << "rowid " << r.rowid;
  return rows;
}

// Ids of the documents whose chunks match one quoted FTS5 term.
inline std::vector<std::string> search_ids(const Catalog& cat, const std::string& kb,
                                           const std::string& word, int limit = 100,
                                           const core::Filter& filter = {}) {
  KeywordQuery q;
  q.match = "\"" + word + "\"";
  q.limit = limit;
  q.filter = filter;
  auto rows = keyword_rows(cat, kb, q);
  std::vector<std::string> ids;
  for (const auto& r : rows) ids.push_back(r.doc.id);
  return ids;
}

inline std::string pragma_text(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return "prepare failed";
  while (sqlite3_step(st) == SQLITE_ROW) {
    const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    if (!out.empty()) out += "\n";
    out += t ? t : "NULL";
  }
  sqlite3_finalize(st);
  return out;
}

// PRAGMA integrity_check plus FTS5's own check of every KB's index against the chunks table
// (an external-content index with stale postings fails it).
inline void expect_integrity(const Catalog& cat) {
  EXPECT_EQ(pragma_text(sqlite_handle(cat), "PRAGMA integrity_check"), "ok");
  for (const auto& kb : cat.kbs().list()) {
    const std::string fts = fts_table(kb.id);
    char* err = nullptr;
    int rc =
        sqlite3_exec(sqlite_handle(cat),
                     ("INSERT INTO " + fts + "(" + fts + ") VALUES('integrity-check')").c_str(),
                     nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << "FTS integrity of " << kb.name << ": " << (err ? err : "");
    sqlite3_free(err);
  }
}

class CatalogTest : public ::testing::Test {
 protected:
  quarry::testing::TempDir dir;
  std::string path = (dir / "catalog.db").string();
  std::unique_ptr<Catalog> cat = Catalog::open(path);
};

}  // namespace quarry::catalog::testing_support
