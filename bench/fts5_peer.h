// The peer every keyword figure is compared with: what a user gets from SQLite FTS5 directly.
// An in-memory table fts5(id UNINDEXED, title, text, tokenize='porter unicode61'), the query's
// words OR-ed, ordered by bm25() with the title weighted 2x. With Tokenizer::trigram, FTS5's
// trigram tokenizer (substring matching, what SQLite offers for text without spaces) and the
// query's overlapping three-character substrings OR-ed.
#pragma once

#include <sqlite3.h>

#include <string>
#include <vector>

#include "beir.h"

namespace quarry::bench {

class Fts5Peer {
 public:
  enum class Tokenizer { porter_unicode61, trigram };
  explicit Fts5Peer(const std::vector<CorpusDoc>& docs,
                    Tokenizer tokenizer = Tokenizer::porter_unicode61);
  ~Fts5Peer();
  Fts5Peer(const Fts5Peer&) = delete;
  Fts5Peer& operator=(const Fts5Peer&) = delete;

  // Ids of the best `k` documents; with `snippets`, FTS5's snippet() is computed for each hit
  // too (for a latency comparison with Quarry's snippeted hits).
  std::vector<std::string> search(const std::string& text, int k, bool snippets);

  // The query as a user would write it: words (runs of letters, digits and non-ASCII
  // characters), quoted, OR-ed.
  static std::string or_expression(const std::string& text);
  // For the trigram table: every three-character substring of each word, quoted, OR-ed.
  static std::string trigram_expression(const std::string& text);

 private:
  Tokenizer tokenizer_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* plain_ = nullptr;
  sqlite3_stmt* snippeted_ = nullptr;
};

}  // namespace quarry::bench
