// The SQLite backend's one connection, shared by its tables (tables.h): the handle, the
// statements of fixed text kept for reuse, the FTS5 extension with the index's tokenizer, and
// the connection-local caches. Private to catalog/sqlite/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "catalog/sqlite/fts_tokenizer.h"
#include "catalog/sqlite/sqlite.h"

namespace quarry::catalog {

struct Db {
  // Opens (creating if needed) and migrates the database at `path`; closes it on destruction.
  explicit Db(const std::string& path);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  sqlite3* handle = nullptr;
  std::unique_ptr<StmtCache> stmts;
  std::string path;  // of the database file: the key of the process-wide keyword copies
  fts5_api* fts5 = nullptr;
  // The tokenizer of a KB's keyword index (kbs.keyword_tokenizer), made once per connection.
  const FtsTokenizer& tokenizer_for(const std::string& tokenize);
  // The FTS5 tokenize argument the KB's keyword index was built with (not_found for no KB).
  std::string keyword_tokenize(std::int64_t kb_id, const std::string& kb_name);
  std::unordered_map<std::string, std::unique_ptr<FtsTokenizer>> tokenizers;

  // Keyword queries per KB on this connection (the in-memory copy is built from the second).
  std::unordered_map<std::int64_t, int> keyword_queries;
  bool memory_index_enabled = true;
  // kb id -> (generation, chunks).
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> chunk_counts;
};

// The one not_found of an unknown (or since deleted) KB, with the command that lists them.
[[noreturn]] void throw_kb_not_found(const std::string& name);

// The base of every table: its statements run on the one connection (opened before any table
// is made). `db_` and `stmts_` are
// what the table code spells (Transaction tx(db_); Stmt(*stmts_, "...")).
class SqliteTable {
 protected:
  explicit SqliteTable(Db& d) : d_(d), db_(d.handle), stmts_(d.stmts.get()) {}
  Db& d_;
  sqlite3* db_;
  StmtCache* stmts_;
};

}  // namespace quarry::catalog
