#include "catalog/embed_cache.h"

#include <cstring>
#include <filesystem>

#include "catalog/sqlite/sqlite.h"
#include "core/util.h"
#include "quarry/error.h"

namespace quarry::catalog {

namespace {

// 16 bytes of SHA-256 each: a collision between two chunk texts under one embedder would
// need ~2^64 chunks.
std::string key_of(const std::string& identity, const std::string& text) {
  return core::sha256_hex(identity).substr(0, 16) + core::sha256_hex(text).substr(0, 32);
}

class SqliteEmbedCache final : public EmbedCache {
 public:
  explicit SqliteEmbedCache(sqlite3* db) : db_(db) {}
  ~SqliteEmbedCache() override { sqlite3_close_v2(db_); }
  SqliteEmbedCache(const SqliteEmbedCache&) = delete;
  SqliteEmbedCache& operator=(const SqliteEmbedCache&) = delete;

  std::vector<std::vector<float>> get(const std::string& identity,
                                      const std::vector<std::string>& texts,
                                      int dimensions) const override;
  void put(const std::string& identity, const std::vector<std::string>& texts,
           const std::vector<std::vector<float>>& vectors) override;
  std::int64_t size() const override;

 private:
  sqlite3* db_;
};

}  // namespace

std::unique_ptr<EmbedCache> EmbedCache::open(const std::string& path, std::int64_t max_entries) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  sqlite3* db = open_wal_database(path, "the embedding cache");
  auto c = std::make_unique<SqliteEmbedCache>(db);
  exec_sql(db,
           "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, dims INTEGER NOT NULL,"
           " vector BLOB NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID");
  exec_sql(db, "CREATE INDEX IF NOT EXISTS embeddings_by_age ON embeddings(at)");
  if (c->size() > max_entries) {
    Stmt(db, "DELETE FROM embeddings WHERE key IN (SELECT key FROM embeddings ORDER BY at LIMIT ?)")
        .bind(1, c->size() - max_entries)
        .exec();
  }
  return c;
}

std::vector<std::vector<float>> SqliteEmbedCache::get(const std::string& identity,
                                                      const std::vector<std::string>& texts,
                                                      int dimensions) const {
  std::vector<std::vector<float>> out(texts.size());
  Stmt s(db_, "SELECT dims, vector FROM embeddings WHERE key = ?");
  for (std::size_t i = 0; i < texts.size(); ++i) {
    s.reset();
    s.bind(1, key_of(identity, texts[i]));
    if (!s.step()) continue;
    const int dims = static_cast<int>(s.i64(0));
    const int bytes = sqlite3_column_bytes(s.raw(), 1);
    if (dims != dimensions || bytes != dims * static_cast<int>(sizeof(float))) continue;
    out[i].resize(static_cast<std::size_t>(dims));
    std::memcpy(out[i].data(), sqlite3_column_blob(s.raw(), 1), static_cast<std::size_t>(bytes));
  }
  return out;
}

void SqliteEmbedCache::put(const std::string& identity, const std::vector<std::string>& texts,
                           const std::vector<std::vector<float>>& vectors) {
  if (texts.size() != vectors.size())
    throw Error(Code::internal, "embedding cache: texts and vectors differ in number");
  Transaction tx(db_);
  Stmt s(db_, "INSERT OR REPLACE INTO embeddings(key, dims, vector, at) VALUES(?, ?, ?, ?)");
  const auto now = core::now_ms();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (vectors[i].empty()) continue;
    s.reset();
    s.bind(1, key_of(identity, texts[i])).bind(2, static_cast<std::int64_t>(vectors[i].size()));
    sqlite3_bind_blob(s.raw(), 3, vectors[i].data(),
                      static_cast<int>(vectors[i].size() * sizeof(float)), SQLITE_TRANSIENT);
    s.bind(4, now);
    s.exec();
  }
  tx.commit();
}

std::int64_t SqliteEmbedCache::size() const {
  Stmt s(db_, "SELECT COUNT(*) FROM embeddings");
  s.step();
  return s.i64(0);
}

}  // namespace quarry::catalog
