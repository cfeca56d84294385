// The SQLite backend of the catalog port: one connection in WAL mode (database.h) shared by
// one object per table group (tables.h), and the transaction discipline of catalog.h over it.
#include "catalog/sqlite/sqlite_catalog.h"
#include "catalog/catalog.h"
#include "catalog/sqlite/filter_sql.h"
#include "catalog/sqlite/schema.h"
#include "catalog/sqlite/tables.h"
#include "quarry/error.h"

namespace quarry::catalog {
namespace {

// BEGIN IMMEDIATE ... COMMIT (a savepoint inside another transaction), or a read snapshot.
class WriteTxn final : public Catalog::Txn {
 public:
  explicit WriteTxn(sqlite3* db) : tx_(db) {}
  void commit() override { tx_.commit(); }

 private:
  Transaction tx_;
};

class ReadTxn final : public Catalog::Txn {
 public:
  explicit ReadTxn(sqlite3* db) : tx_(db) {}
  void commit() override {}

 private:
  ReadTransaction tx_;
};

}  // namespace

Db::Db(const std::string& path) : handle(open_wal_database(path, "catalog")), path(path) {
  try {
    stmts = std::make_unique<StmtCache>(handle);
    exec_sql(handle, "PRAGMA foreign_keys = ON");
    fts5 = fts5_api_of(handle);
    register_rank_function(fts5);
    register_filter_function(handle);
    register_quarry_tokenizer(fts5);
    migrate(handle);
  } catch (...) {
    tokenizers.clear();
    stmts.reset();
    sqlite3_close_v2(handle);
    throw;
  }
}

void throw_kb_not_found(const std::string& name) {
  throw Error(Code::not_found, "knowledge base '" + name + "' not found (see `quarry kb list`)",
              {{"kb", name}});
}

const FtsTokenizer& Db::tokenizer_for(const std::string& tokenize) {
  auto& t = tokenizers[tokenize];
  if (!t) t = std::make_unique<FtsTokenizer>(fts5, tokenize);
  return *t;
}

std::string Db::keyword_tokenize(std::int64_t kb_id, const std::string& kb_name) {
  Stmt s(*stmts, "SELECT keyword_tokenizer FROM kbs WHERE id = ?");
  s.bind(1, kb_id);
  if (!s.step()) throw_kb_not_found(kb_name);
  return s.str(0);
}

Db::~Db() {
  tokenizers.clear();
  stmts.reset();  // finalized before the connection closes
  sqlite3_close_v2(handle);
}

namespace {

class SqliteCatalog final : public Catalog {
 public:
  explicit SqliteCatalog(const std::string& path) : db_(path) {}
  SqliteCatalog(const SqliteCatalog&) = delete;
  SqliteCatalog& operator=(const SqliteCatalog&) = delete;

  KbTable& kbs() override { return kbs_; }
  const KbTable& kbs() const override { return kbs_; }
  DocumentTable& documents() override { return documents_; }
  const DocumentTable& documents() const override { return documents_; }
  KeywordIndex& keyword() override { return keyword_; }
  const KeywordIndex& keyword() const override { return keyword_; }
  AuditLog& audit() override { return audit_; }
  const AuditLog& audit() const override { return audit_; }
  TokenTable& tokens() override { return tokens_; }
  const TokenTable& tokens() const override { return tokens_; }
  RevisionTable& revisions() override { return revisions_; }
  const RevisionTable& revisions() const override { return revisions_; }
  PumpTable& pump() override { return pump_; }
  const PumpTable& pump() const override { return pump_; }

  int schema_version() const override {
    Stmt s(*db_.stmts, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
    s.step();
    return static_cast<int>(s.i64(0));
  }
  std::int64_t local_changes() const override { return sqlite3_total_changes64(db_.handle); }

  sqlite3* handle() const { return db_.handle; }

 protected:
  std::unique_ptr<Txn> begin_read() const override { return std::make_unique<ReadTxn>(db_.handle); }
  std::unique_ptr<Txn> begin_write() override { return std::make_unique<WriteTxn>(db_.handle); }

 private:
  // Declared first: the tables below hold references into it.
  Db db_;
  SqliteKbTable kbs_{db_};
  SqliteDocumentTable documents_{db_};
  SqliteKeywordIndex keyword_{db_};
  SqliteAuditLog audit_{db_};
  SqliteTokenTable tokens_{db_};
  SqliteRevisionTable revisions_{db_};
  SqlitePumpTable pump_{db_};
};

}  // namespace

std::unique_ptr<Catalog> Catalog::open(const std::string& path) {
  return std::make_unique<SqliteCatalog>(path);
}

sqlite3* sqlite_handle(const Catalog& c) {
  const auto* s = dynamic_cast<const SqliteCatalog*>(&c);
  return s ? s->handle() : nullptr;
}

}  // namespace quarry::catalog
