// Engine: the library facade (include/quarry/engine.h) over the catalog, the write path
// (ingest/), the retrieval modes (search/) and the vector lifecycle (lifecycle/). This file:
// opening a data directory, the caller's identity, the index lifecycle, activity and tokens.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "catalog/writer_lock.h"
#include "convert/converter.h"
#include "core/kb_config.h"
#include "core/util.h"
#include "engine/engine_impl.h"
#include "engine/tokens.h"
#include "ingest/staging.h"
#include "lifecycle/scheduler.h"
#include "secrets/secret_store.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace quarry {

std::unique_ptr<Engine> Engine::open(const EngineOptions& options) {
  return std::make_unique<engine::EngineImpl>(options);
}

namespace engine {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Document to_document(const catalog::DocumentRow& r, const core::Layout& layout) {
  Document d;
  d.id = r.id;
  d.kb = r.kb;
  d.filename = r.filename;
  d.title = r.title;
  d.source_sha256 = r.source_sha256;
  d.content_sha256 = r.content_sha256;
  d.metadata_json = r.metadata_json;
  if (r.subject_key && r.subject_value) d.subject = Subject{*r.subject_key, *r.subject_value};
  d.converter = r.converter;
  d.raw_ext = r.raw_ext;
  d.source_bytes = r.source_bytes;
  d.markdown_bytes = r.markdown_bytes;
  d.chunk_count = r.chunk_count;
  d.created_at = core::iso8601_utc(r.created_at);
  d.updated_at = core::iso8601_utc(r.updated_at);
  d.index_status.keyword = "ready";     // written in the document's own transaction
  d.index_status.vector = "not_built";  // the engine fills in the vector status
  d.markdown_path = layout.markdown_path(r.kb, r.id);
  d.raw_path = layout.raw_path(r.kb, r.id, r.raw_ext);
  return d;
}

std::string open_data_dir(const std::string& dir) {
  if (dir.empty())
    throw Error(Code::invalid_argument, "data directory is empty", {{"field", "data_dir"}});
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(Code::io_error, "cannot create data directory " + dir + ": " + ec.message() +
                                    "; fix the path or its permissions, or choose another with "
                                    "--data-dir (or QUARRY_HOME)");
  return fs::canonical(dir).string();
}

EngineImpl::EngineImpl(const EngineOptions& o) : opts_(o) {
  layout_.data_dir = open_data_dir(opts_.data_dir);
  if (opts_.actor.empty()) opts_.actor = core::os_user();
  cat_ = catalog::Catalog::open(layout_.catalog_path());
  vectors_ = std::make_unique<lifecycle::Vectors>(layout_.data_dir, *cat_,
                                                  secrets::secret_lookup(layout_.data_dir));
  // Staged files are orphans of a crash only if no writer holds the lock; a reader never
  // waits for one: if the lock is busy, the live writer's files are left alone.
  if (ingest::has_staged_files(layout_)) {
    try {
      catalog::WriterLock lock(layout_.data_dir, 0);
      ingest::recover_staged_files(layout_, *cat_);
    } catch (const Error& e) {
      if (e.code() != Code::busy) throw;
    }
  }
}

Kb EngineImpl::resolve(const std::string& name) const {
  catalog::KbRow row = cat_->kbs().get(name);
  return Kb{row.ref(), parsed_config(row.name, row.config_json)};
}

const KbConfig& EngineImpl::parsed_config(const std::string& name, const std::string& text) const {
  auto& [seen, config] = configs_[name];
  if (seen != text || text.empty()) {
    config = core::kb_config_from_json(json::parse(text));
    seen = text;
  }
  return config;
}

catalog::AuditEntry EngineImpl::audit(const std::string& action, const std::string& kb,
                                      const std::string& target) const {
  catalog::AuditEntry a;
  a.actor = opts_.actor;
  a.surface = opts_.surface;
  a.action = action;
  a.kb = kb;
  a.target = target;
  return a;
}

ingest::WriteContext EngineImpl::write_context(const catalog::KbRef& kb,
                                               const chunk::Chunking& chunking) {
  return ingest::WriteContext{layout_,          *cat_, kb, convert::Registry::builtin(), chunking,
                              audit("", "", "")};
}

catalog::EmbedCache& EngineImpl::embed_cache() {
  if (!cache_) cache_ = catalog::EmbedCache::open(layout_.embed_cache_path());
  return *cache_;
}

lifecycle::foreground::Shared* EngineImpl::foreground() {
  if (!activity_opened_) {
    activity_ = lifecycle::foreground::shared(layout_.data_dir);
    activity_opened_ = true;
  }
  return activity_.get();
}

// --- index lifecycle ---------------------------------------------------------------------

ReindexReport EngineImpl::reindex(const std::string& name, const ReindexOptions& opts) {
  const Kb kb = resolve(name);
  lifecycle::Scheduler sched(
      *vectors_, embed_cache(),
      [this](const catalog::DocumentRow& doc, const KbConfig& c) {
        return ingest::rechunk_document(layout_, vectors_->chunking(doc.kb, c), doc);
      },
      opts_.lock_timeout_ms);
  return sched.sweep(kb.ref, kb.config, opts, audit("", kb.ref.name, ""));
}

// --- activity log and tokens -------------------------------------------------------------

std::vector<ActivityEntry> EngineImpl::activity(const std::string& kb, int limit,
                                                std::int64_t before_id) {
  if (limit < 1 || limit > 1000)
    throw Error(Code::invalid_argument, "limit must be 1-1000", {{"field", "limit"}});
  std::vector<ActivityEntry> out;
  for (auto& r : cat_->audit().list(limit, kb, before_id))
    out.push_back(ActivityEntry{r.id, core::iso8601_utc(r.at), std::move(r.actor),
                                std::move(r.surface), std::move(r.action), std::move(r.kb),
                                std::move(r.target), std::move(r.details_json)});
  return out;
}

NewToken EngineImpl::create_token(const std::string& name, const std::string& scope,
                                  const std::vector<std::string>& kbs) {
  catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
  return mint_token(cat_->tokens(), name, scope, kbs, audit("token.create", "", ""));
}

std::vector<TokenInfo> EngineImpl::list_tokens() {
  std::vector<TokenInfo> out;
  for (const auto& r : cat_->tokens().list()) out.push_back(token_info(r));
  return out;
}

void EngineImpl::revoke_token(const std::string& id) {
  catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
  if (!cat_->tokens().revoke(id, audit("token.revoke", "", id)))
    throw Error(Code::not_found, "no valid token with id " + id + " (see `quarry token list`)",
                {{"token", id}});
}

std::optional<TokenInfo> EngineImpl::authenticate(const std::string& secret) {
  return find_token(cat_->tokens(), secret);
}

void EngineImpl::set_identity(const std::string& actor, const std::string& surface) {
  opts_.actor = actor.empty() ? core::os_user() : actor;
  opts_.surface = surface;
}

}  // namespace engine
}  // namespace quarry
