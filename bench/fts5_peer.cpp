#include "fts5_peer.h"

#include <cctype>

namespace quarry::bench {

Fts5Peer::Fts5Peer(const std::vector<CorpusDoc>& docs, Tokenizer tokenizer)
    : tokenizer_(tokenizer) {
  sqlite3_open(":memory:", &db_);
  const std::string create =
      std::string("CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, title, text, tokenize='") +
      (tokenizer == Tokenizer::trigram ? "trigram" : "porter unicode61") + "')";
  sqlite3_exec(db_, create.c_str(), nullptr, nullptr, nullptr);
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

namespace {

// Runs of ASCII letters and digits and of non-ASCII bytes (unicode61 keeps letters of every
// script in its tokens; CJK punctuation stays inside, as a user splitting on spaces would).
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text + " ") {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80) {
      word += c;
      continue;
    }
    if (!word.empty()) out.push_back(word);
    word.clear();
  }
  return out;
}

std::string or_of(const std::vector<std::string>& terms) {
  std::string expr;
  for (const auto& t : terms) expr += (expr.empty() ? "\"" : " OR \"") + t + "\"";
  return expr;
}

}  // namespace

std::string Fts5Peer::or_expression(const std::string& text) {
  return or_of(words_of(text));
}

std::string Fts5Peer::trigram_expression(const std::string& text) {
  std::vector<std::string> grams;
  for (const auto& w : words_of(text)) {
    std::vector<std::size_t> at;  // character starts
    for (std::size_t i = 0; i < w.size(); ++i)
      if ((static_cast<unsigned char>(w[i]) & 0xC0) != 0x80) at.push_back(i);
    at.push_back(w.size());
    for (std::size_t k = 0; k + 3 < at.size(); ++k) grams.push_back(w.substr(at[k], at[k + 3] - at[k]));
  }
  return or_of(grams);
}

std::vector<std::string> Fts5Peer::search(const std::string& text, int k, bool snippets) {
  std::vector<std::string> ids;
  const std::string expr =
      tokenizer_ == Tokenizer::trigram ? trigram_expression(text) : or_expression(text);
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
