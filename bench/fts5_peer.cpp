#include "fts5_peer.h"

#include <cctype>

namespace quarry::bench {

Fts5Peer::Fts5Peer(const std::vector<CorpusDoc>& docs) {
  sqlite3_open(":memory:", &db_);
  sqlite3_exec(
      db_,
      "CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, title, text, tokenize='porter unicode61')",
      nullptr, nullptr, nullptr);
  sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr);
  sqlite3_stmt* ins = nullptr;
  sqlite3_prepare_v2(db_, "INSERT INTO t(id, title, text) VALUES(?, ?, ?)", -1, &ins, nullptr);
  for (const auto& d : docs) {
    sqlite3_bind_text(ins, 1, d.id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 2, d.title.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 3, d.text.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_step(ins);
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
  sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_prepare_v2(db_,
                     "SELECT id FROM t WHERE t MATCH ? ORDER BY bm25(t, 0.0, 2.0, 1.0) LIMIT ?", -1,
                     &plain_, nullptr);
  sqlite3_prepare_v2(db_,
                     "SELECT id, snippet(t, 2, '**', '**', '…', 32) FROM t WHERE t MATCH ?"
                     " ORDER BY bm25(t, 0.0, 2.0, 1.0) LIMIT ?",
                     -1, &snippeted_, nullptr);
}

Fts5Peer::~Fts5Peer() {
  sqlite3_finalize(plain_);
  sqlite3_finalize(snippeted_);
  sqlite3_close(db_);
}

std::string Fts5Peer::or_expression(const std::string& text) {
  std::string expr, word;
  for (char c : text + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += c;
      continue;
    }
    if (!word.empty()) expr += (expr.empty() ? "\"" : " OR \"") + word + "\"";
    word.clear();
  }
  return expr;
}

std::vector<std::string> Fts5Peer::search(const std::string& text, int k, bool snippets) {
  std::vector<std::string> ids;
  const std::string expr = or_expression(text);
  if (expr.empty()) return ids;
  sqlite3_stmt* q = snippets ? snippeted_ : plain_;
  sqlite3_bind_text(q, 1, expr.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(q, 2, k);
  while (sqlite3_step(q) == SQLITE_ROW)
    ids.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)));
  sqlite3_reset(q);
  return ids;
}

}  // namespace quarry::bench
