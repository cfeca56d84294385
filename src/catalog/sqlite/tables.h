// The SQLite backend's tables: one type per table group of the port (catalog/*_table.h,
// keyword_index.h, audit_log.h), each implemented in its own file over the one connection of
// database.h. Private to catalog/sqlite/.
#pragma once

#include "catalog/catalog.h"
#include "catalog/sqlite/database.h"

namespace quarry::catalog {

class SqliteKbTable final : public KbTable, SqliteTable {  // kb_table.cpp
 public:
  explicit SqliteKbTable(Db& d) : SqliteTable(d) {}
  KbRow create(const std::string& name, const std::string& config_json,
               const AuditEntry& a) override;
  std::optional<KbRow> find(const std::string& name) const override;
  KbRow get(const std::string& name) const override;
  std::vector<KbRow> list() const override;
  void update_config(const KbRef& kb, const std::string& config_json, const AuditEntry& a) override;
  std::vector<std::string> remove(const KbRef& kb, const AuditEntry& a) override;
  KbStats stats(const KbRef& kb) const override;
  std::int64_t chunk_count(const KbRef& kb) const override;
  std::pair<std::int64_t, std::int64_t> generations(const KbRef& kb) const override;
};

class SqliteDocumentTable final : public DocumentTable, SqliteTable {  // document_table.cpp
 public:
  explicit SqliteDocumentTable(Db& d) : SqliteTable(d) {}
  std::optional<DocumentRow> find(const KbRef& kb, const std::string& id) const override;
  std::optional<DocumentRow> find_by_filename(const KbRef& kb,
                                              const std::string& filename) const override;
  std::vector<DocumentRow> list(const KbRef& kb, const std::string& after, int limit,
                                const core::Filter& filter) const override;
  std::vector<DocumentRef> refs(const KbRef& kb, const core::Filter& filter) const override;
  std::int64_t count_matching(const KbRef& kb, const core::Filter& filter) const override;
  bool any(const KbRef& kb, const core::Filter& filter) const override;
  std::vector<ChunkRow> chunks_of(const KbRef& kb, const std::string& doc_id) const override;
  std::vector<DocumentRow> chunked_otherwise(const KbRef& kb,
                                             const std::string& chunking) const override;
  void put(const KbRef& kb, const DocumentRow& doc, const std::vector<ChunkRow>& chunks,
           const AuditEntry& a) override;
  bool remove(const KbRef& kb, const std::string& id, const AuditEntry& a) override;
  std::vector<std::string> remove_where(const KbRef& kb, const core::Filter& filter,
                                        const AuditEntry& a) override;
  void replace_chunks(const KbRef& kb, const std::string& doc_id, const std::string& chunking,
                      const std::vector<ChunkRow>& chunks) override;
};

class SqliteKeywordIndex final : public KeywordIndex, SqliteTable {  // keyword_index.cpp
 public:
  explicit SqliteKeywordIndex(Db& d) : SqliteTable(d) {}
  std::vector<KeywordRow> search(const KbRef& kb, const KeywordQuery& q) const override;
  std::optional<std::vector<KeywordRow>> search_cached(const KbRef& kb,
                                                       const std::vector<std::string>& words,
                                                       int limit,
                                                       const Bm25Params& p) const override;
  void set_memory_index_enabled(bool on) override { d_.memory_index_enabled = on; }
  void load_rows(KeywordRow* begin, KeywordRow* end) const override;
  void load_keys(KeywordRow* begin, KeywordRow* end) const override;
  std::vector<KeywordRow> load_chunks(const KbRef& kb,
                                      const std::vector<ChunkKey>& keys) const override;
  core::KeywordAnalysis analysis(const KbRef& kb) const override;
  std::vector<Snippet> snippets(const KbRef& kb, const std::string& query,
                                const std::vector<const std::string*>& texts) const override;
};

class SqliteAuditLog final : public AuditLog, SqliteTable {  // audit_log.cpp
 public:
  explicit SqliteAuditLog(Db& d) : SqliteTable(d) {}
  std::vector<AuditRow> list(int limit, const std::string& kb,
                             std::int64_t before_id) const override;
  void append(const AuditEntry& a) override;
};

class SqliteTokenTable final : public TokenTable, SqliteTable {  // token_table.cpp
 public:
  explicit SqliteTokenTable(Db& d) : SqliteTable(d) {}
  void create(const TokenRow& row, const std::string& secret_hash, const AuditEntry& a) override;
  std::vector<TokenRow> list() const override;
  std::optional<TokenRow> find_by_hash(const std::string& secret_hash) const override;
  bool revoke(const std::string& id, const AuditEntry& a) override;
};

class SqliteRevisionTable final : public RevisionTable, SqliteTable {  // revision_table.cpp
 public:
  explicit SqliteRevisionTable(Db& d) : SqliteTable(d) {}
  std::vector<RevisionRow> list(const KbRef& kb) const override;
  std::optional<RevisionRow> in_state(const KbRef& kb, const std::string& state) const override;
  void put(const KbRef& kb, const RevisionRow& r) override;
  void remove(const KbRef& kb, const std::string& revision) override;
  void cut_over(const KbRef& kb, const std::string& building,
                const std::string& adopt_chunking) override;
  void put_coordinates(const KbRef& kb, const CoordinatesRow& c) override;
  std::vector<CoordinatesRow> coordinates_of(const KbRef& kb,
                                             const std::string& doc_id) const override;
  void delete_coordinates(const KbRef& kb, const std::string& doc_id) override;
  void move_coordinates(const KbRef& kb, const std::string& revision,
                        const std::string& store_id) override;
  std::vector<std::string> orphaned_coordinates(const KbRef& kb) const override;
  std::vector<PendingDocument> pending(const KbRef& kb, const std::string& revision, int limit,
                                       const PendingDocument* after,
                                       std::int64_t updated_since) const override;
  VectorCounts counts(const KbRef& kb, const std::string& revision, const std::string& older,
                      const core::Filter& filter) const override;
  void put_failure(const KbRef& kb, const FailureRow& f) override;
  std::vector<FailureRow> failures(const KbRef& kb, const std::string& revision,
                                   int limit) const override;
  void put_staged_chunks(const KbRef& kb, const std::string& revision, const std::string& doc_id,
                         const std::string& content_sha256,
                         const std::vector<ChunkRow>& chunks) override;
  std::optional<std::vector<ChunkRow>> staged_chunks(
      const KbRef& kb, const std::string& revision, const std::string& doc_id,
      const std::string& content_sha256) const override;
};

class SqlitePumpTable final : public PumpTable, SqliteTable {  // pump_table.cpp
 public:
  explicit SqlitePumpTable(Db& d) : SqliteTable(d) {}
  std::vector<PumpUseCaseRow> list() const override;
  std::optional<PumpUseCaseRow> find(const std::string& name) const override;
  void deploy(const std::vector<PumpUseCaseRow>& rows, const AuditEntry& a) override;
  bool claim_lease(const std::string& name, const std::string& owner, std::int64_t now,
                   std::int64_t stale_before) override;
  bool take_over_lease(const std::string& name, const std::string& old_owner,
                       const std::string& owner, std::int64_t now) override;
  bool finish_run(const std::string& name, const std::string& owner,
                  const PumpRunEnd& end) override;
  bool trigger(const std::string& name, std::int64_t now) override;
  std::optional<std::pair<std::string, std::string>> tombstone(
      const std::string& name, const std::string& content_hash,
      const std::string& key) const override;
  void put_tombstone(const std::string& name, const std::string& content_hash,
                     const std::string& key, const std::string& code, const std::string& message,
                     std::int64_t at) override;
  std::int64_t tombstone_count(const std::string& name) const override;
  void add_usage(const std::string& name, std::int64_t at, const std::vector<int>& chunks,
                 const std::string& kind) override;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> usage_since(
      std::int64_t since) const override;
  std::int64_t usage_entries_since(std::int64_t since) const override;
  std::optional<std::string> setting(const std::string& key) const override;
  void set_setting(const std::string& key, const std::optional<std::string>& value,
                   const AuditEntry& a) override;
};

}  // namespace quarry::catalog
