// A small SQLite app for the pump's tests: notes to embed, their chunks and failures, and a
// use case whose pending query is "notes without a chunk under the current revision".
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace quarry::pump {

class App {
 public:
  explicit App(const std::filesystem::path& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    sqlite3_busy_timeout(db_, 10000);  // the pump may be writing (the scheduler's tests)
    exec(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);"
        "CREATE TABLE note_chunks (note_id INTEGER NOT NULL, seq INTEGER NOT NULL, embedding "
        "TEXT NOT NULL, content TEXT NOT NULL, revision TEXT NOT NULL, meta TEXT, "
        "PRIMARY KEY (note_id, seq));"
        "CREATE TABLE note_failures (note_id INTEGER PRIMARY KEY, code TEXT, skipped INTEGER, "
        "revision TEXT);");
  }
  ~App() { sqlite3_close(db_); }
  void exec(const std::string& sql) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
  }
  std::string one(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr), SQLITE_OK);
    std::string out;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
      out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return out;
  }
  int count(const std::string& where = "1") {
    return std::stoi(one("SELECT COUNT(*) FROM note_chunks WHERE " + where));
  }
  void add_notes(int from, int to, const std::string& body = "") {
    for (int i = from; i <= to; ++i)
      exec("INSERT INTO notes(id, body) VALUES (" + std::to_string(i) + ", '" +
           (body.empty() ? "note number " + std::to_string(i) + " about pumps" : body) + "')");
  }

 private:
  sqlite3* db_ = nullptr;
};

// Rows with no chunk under the current revision are pending; failures are stored but do not
// exclude a row (so a later run re-reports it as skipped) unless `exclude_failures`.
inline nlohmann::json use_case(int batch_size, bool exclude_failures = false, bool limit = true) {
  std::string pending =
      "SELECT n.id AS id, n.body AS content FROM notes n WHERE NOT EXISTS (SELECT 1 FROM "
      "note_chunks c WHERE c.note_id = n.id AND c.revision = $2)";
  if (exclude_failures)
    pending +=
        " AND NOT EXISTS (SELECT 1 FROM note_failures f WHERE f.note_id = n.id AND "
        "f.revision = $2)";
  pending += " ORDER BY n.id";
  if (limit) pending += " LIMIT $1";
  return {{"batch_size", batch_size},
          {"source",
           {{"type", "sql"},
            {"driver", "sqlite"},
            {"path", "app.db"},
            {"pending", pending},
            {"delete_document", "DELETE FROM note_chunks WHERE note_id = $1"},
            {"store_chunk",
             "INSERT INTO note_chunks(note_id, seq, embedding, content, revision, meta) VALUES "
             "($1, $2, $3, $4, $5, $6)"},
            {"store_failure",
             "INSERT OR REPLACE INTO note_failures(note_id, code, skipped, revision) VALUES "
             "($1, $2, $4, $5)"}}}};
}

}  // namespace quarry::pump
