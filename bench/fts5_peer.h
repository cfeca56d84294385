// The peer every keyword figure is compared with: what a user gets from SQLite FTS5 directly.
// An in-memory table fts5(id UNINDEXED, title, text, tokenize='porter unicode61'), the query's
// words OR-ed, ordered by bm25() with the title weighted 2x.
#pragma once

#include <sqlite3.h>

#include <string>
#include <vector>

#include "beir.h"

namespace quarry::bench {

class Fts5Peer {
 public:
  explicit Fts5Peer(const std::vector<CorpusDoc>& docs);
  ~Fts5Peer();
  Fts5Peer(const Fts5Peer&) = delete;
  Fts5Peer& operator=(const Fts5Peer&) = delete;

  // Ids of the best `k` documents; with `snippets`, FTS5's snippet() is computed for each hit
  // too (for a latency comparison with Quarry's snippeted hits).
  std::vector<std::string> search(const std::string& text, int k, bool snippets);

  // The query as a user would write it: alphanumeric words, quoted, OR-ed.
  static std::string or_expression(const std::string& text);

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* plain_ = nullptr;
  sqlite3_stmt* snippeted_ = nullptr;
};

}  // namespace quarry::bench
