// The Engine facade's implementation (include/quarry/engine.h), split by job over several files:
// engine.cpp (opening a data directory, identity, the index lifecycle, activity, tokens),
// kbs.cpp (knowledge bases), documents.cpp (ingest and documents), queries.cpp (search, grep).
//
// Every call resolves its KB once (resolve(): a KbRef and the parsed config) and hands that to
// the rooms below: the catalog's tables, the write path (ingest/), the retrieval modes
// (search/) and the vector lifecycle (lifecycle/).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/embed_cache.h"
#include "chunk/chunking.h"
#include "core/layout.h"
#include "engine/data_dir.h"
#include "ingest/ingest.h"
#include "ingest/walk.h"
#include "lifecycle/foreground.h"
#include "lifecycle/vectors.h"
#include "quarry/engine.h"

namespace quarry::engine {

// A KB as one call sees it: resolved once, its config parsed once.
struct Kb {
  catalog::KbRef ref;
  KbConfig config;
};

double ms_since(std::chrono::steady_clock::time_point t0);

Document to_document(const catalog::DocumentRow& r, const core::Layout& layout);

class EngineImpl final : public Engine {
 public:
  explicit EngineImpl(const EngineOptions& o);

  const std::string& data_dir() const override { return layout_.data_dir; }

  // kbs.cpp
  KbInfo create_kb(const std::string& name, const std::string& config_json) override;
  std::vector<KbInfo> list_kbs() override;
  KbInfo describe_kb(const std::string& name) override;
  KbInfo set_kb(const std::string& name,
                const std::vector<std::pair<std::string, std::string>>& settings,
                bool cutover_immediate) override;
  KbChangePlan plan_kb_change(const std::string& name,
                              const std::vector<std::pair<std::string, std::string>>& settings,
                              bool cutover_immediate) override;
  void delete_kb(const std::string& name) override;
  StoreMigrationReport migrate_store(const std::string& kb, const std::string& store_id,
                                     const std::string& store_settings_json,
                                     const StoreMigrationOptions& options) override;

  // documents.cpp
  IngestReport ingest_path(const std::string& kb, const std::string& path,
                           const IngestOptions& opts) override;
  IngestItem ingest_bytes(const std::string& kb, const std::string& filename,
                          const std::string& bytes, const IngestOptions& opts) override;
  DocumentPage list_documents(const std::string& kb, const std::string& cursor, int limit,
                              const std::string& filter_json) override;
  Document get_document(const std::string& kb, const std::string& id) override;
  std::string read_markdown(const std::string& kb, const std::string& id) override;
  std::vector<ChunkInfo> list_chunks(const std::string& kb, const std::string& id) override;
  Document edit_document(const std::string& kb, const std::string& id,
                         const std::string& markdown) override;
  Document reconvert_document(const std::string& kb, const std::string& id) override;
  void delete_document(const std::string& kb, const std::string& id) override;
  std::vector<std::string> delete_where(const std::string& kb,
                                        const std::string& filter_json) override;

  // queries.cpp
  SearchResponse search(const SearchRequest& r) override;
  GrepResponse grep(const GrepRequest& r) override;

  // engine.cpp
  ReindexReport reindex(const std::string& kb, const ReindexOptions& opts) override;
  std::vector<ActivityEntry> activity(const std::string& kb, int limit,
                                      std::int64_t before_id) override;
  NewToken create_token(const std::string& name, const std::string& scope,
                        const std::vector<std::string>& kbs) override;
  std::vector<TokenInfo> list_tokens() override;
  void revoke_token(const std::string& id) override;
  std::optional<TokenInfo> authenticate(const std::string& secret) override;
  void set_identity(const std::string& actor, const std::string& surface) override;

 private:
  // engine.cpp
  // Resolves a KB by name (not_found names it); its config parsed once per text of it
  // (parsing was a tenth of a vector search).
  Kb resolve(const std::string& name) const;
  const KbConfig& parsed_config(const std::string& name, const std::string& text) const;
  catalog::AuditEntry audit(const std::string& action, const std::string& kb,
                            const std::string& target) const;
  ingest::WriteContext write_context(const catalog::KbRef& kb, const chunk::Chunking& chunking);
  catalog::EmbedCache& embed_cache();
  lifecycle::foreground::Shared* foreground();

  // kbs.cpp
  KbInfo info(const catalog::KbRow& kb);
  // Chunks every document of the KB under `config` (dry_run: only checks that all can be).
  // Chunks every document under `kb`'s config: checks only (dry_run: nothing written; the
  // first document that cannot be cut fails the call) or rewrites each one. Returns the
  // number of chunks the documents make.
  std::int64_t rechunk_all(const Kb& kb, bool dry_run);
  // set_kb's decision (and its checks), computed for plan_kb_change and set_kb alike.
  struct KbChange {
    KbChangePlan plan;
    std::string audit_details;  // the settings as given, for the kb.set audit row
  };
  KbChange decide_kb_change(const Kb& kb,
                            const std::vector<std::pair<std::string, std::string>>& settings,
                            bool cutover_immediate);

  // documents.cpp
  catalog::DocumentRow doc_row(const Kb& kb, const std::string& id) const;
  IngestItem ingest_entry(const Kb& kb, const chunk::Chunking& chunking, const ingest::WalkEntry& e,
                          const IngestOptions& opts, std::int64_t* batch_chunks,
                          std::int64_t* bytes_total);
  void mark_pending(const Kb& kb, IngestItem& item);
  Document with_vectors(Document d, const Kb& kb, const catalog::DocumentRow& row);

  EngineOptions opts_;
  core::Layout layout_;
  std::unique_ptr<catalog::Catalog> cat_;
  std::unique_ptr<lifecycle::Vectors> vectors_;
  std::unique_ptr<catalog::EmbedCache> cache_;  // opened by the first reindex
  mutable std::unordered_map<std::string, std::pair<std::string, KbConfig>> configs_;
  std::shared_ptr<lifecycle::foreground::Shared> activity_;  // opened by the first search
  bool activity_opened_ = false;
};

}  // namespace quarry::engine
