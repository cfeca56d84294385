// Engine: the library facade (include/quarry/engine.h) over the catalog, the write path
// (ingest/), the retrieval modes (search/) and the vector lifecycle (lifecycle/).
#include "quarry/engine.h"

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>

#include "catalog/catalog.h"
#include "catalog/embed_cache.h"
#include "catalog/writer_lock.h"
#include "core/filter.h"
#include "core/kb_config.h"
#include "core/layout.h"
#include "core/util.h"
#include "engine/serving_vectors.h"
#include "engine/tokens.h"
#include "ingest/ingest.h"
#include "ingest/staging.h"
#include "ingest/walk.h"
#include "lifecycle/foreground.h"
#include "lifecycle/migrate.h"
#include "lifecycle/scheduler.h"
#include "lifecycle/vectors.h"
#include "search/retrieval.h"
#include "secrets/secret_store.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace quarry {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

KbConfig parse_config(const std::string& text) {
  json j = text.empty() ? json::object() : json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw Error(Code::invalid_argument, "config is not valid JSON", {{"field", "config"}});
  return core::kb_config_from_json(j);
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

class EngineImpl final : public Engine {
 public:
  explicit EngineImpl(const EngineOptions& o) : opts_(o) {
    if (opts_.data_dir.empty())
      throw Error(Code::invalid_argument, "data directory is empty", {{"field", "data_dir"}});
    if (opts_.actor.empty()) opts_.actor = core::os_user();
    std::error_code ec;
    fs::create_directories(opts_.data_dir, ec);
    if (ec)
      throw Error(Code::io_error,
                  "cannot create data directory " + opts_.data_dir + ": " + ec.message());
    layout_.data_dir = fs::canonical(opts_.data_dir).string();
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

  const std::string& data_dir() const override { return layout_.data_dir; }

  // --- knowledge bases -------------------------------------------------------------------

  KbInfo create_kb(const std::string& name, const std::string& config_json) override {
    core::validate_kb_name(name);
    KbConfig config = parse_config(config_json);
    vectors_->for_kb(name, config);  // unknown provider/store ids fail before anything is made
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    std::error_code ec;
    if (!cat_->find_kb(name)) {
      // Orphans of a crash between a delete's catalog commit and its cleanup: files, and
      // vectors a store still keeps under this name (never let them into the new KB).
      fs::remove_all(layout_.kb_dir(name), ec);
      vectors_->delete_kb(name, config);
    }
    cat_->create_kb(name, core::kb_config_to_json(config).dump(), audit("kb.create", name, name));
    vectors_->plan(name, config);  // its (empty) serving revision
    fs::create_directories(layout_.docs_dir(name), ec);
    fs::create_directories(layout_.raw_dir(name), ec);
    return describe_kb(name);
  }

  std::vector<KbInfo> list_kbs() override {
    std::vector<KbInfo> out;
    for (const auto& kb : cat_->list_kbs()) out.push_back(info(kb));
    return out;
  }

  KbInfo describe_kb(const std::string& name) override { return info(cat_->get_kb(name)); }

  KbInfo set_kb(const std::string& name,
                const std::vector<std::pair<std::string, std::string>>& settings,
                bool cutover_immediate) override {
    if (settings.empty())
      throw Error(Code::invalid_argument, "nothing to set: pass key=value pairs",
                  {{"field", "settings"}});
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    auto row = cat_->get_kb(name);
    KbConfig before = core::kb_config_from_json(json::parse(row.config_json));
    KbConfig after = before;
    for (const auto& [k, v] : settings) after = core::kb_config_set(after, k, v);
    if (after.subjects.keys != before.subjects.keys && cat_->kb_stats(name).documents > 0)
      throw Error(Code::conflict,
                  "subject keys cannot change while the knowledge base has documents; create a new "
                  "knowledge base and re-ingest",
                  {{"field", "subjects.keys"}});
    const bool store_changed =
        after.store.id != before.store.id ||
        json::parse(after.store.settings_json) != json::parse(before.store.settings_json);
    if (store_changed && vectors_->kb_info(name, before).stored > 0)
      throw Error(Code::conflict,
                  "'" + name +
                      "' has vectors in its store: move them with `quarry kb migrate-store " +
                      name + " --to " + after.store.id + "` (no re-embedding)",
                  {{"field", "store"}});
    json changes = json::object();
    for (const auto& [k, v] : settings) changes[k] = v;
    auto a = audit("kb.set", name, name);
    a.details_json = changes.dump();
    // New budgets, or an embedder that counts tokens another way, cut documents anew.
    const bool rechunk =
        vectors_->chunking(name, before).revision != vectors_->chunking(name, after).revision;
    // Chunk every document under the new settings first: if one would fail (too_many_chunks,
    // ...), nothing is changed, rather than half the KB chunked one way and half the other.
    if (rechunk) rechunk_all(name, after, /*dry_run=*/true);
    cat_->update_kb_config(name, core::kb_config_to_json(after).dump(), a);
    // A new revision builds in the background (reindex / serve) while the serving one answers
    // (SPEC §7). New chunking is part of it: the building revision's chunks are staged beside
    // the serving ones and replace them at the cut-over, so keyword and vector hits keep
    // coming from one chunking. Without vectors to keep (no embedder, nothing embedded yet,
    // --cutover immediate) the KB is re-chunked now.
    auto plan = vectors_->plan(name, after, cutover_immediate);
    const bool staged = plan.building && plan.serving &&
                        plan.building->config_revision != plan.serving->config_revision;
    if (rechunk && !staged) rechunk_all(name, after, /*dry_run=*/false);
    if (plan.building) {
      auto ev = audit("reembed_started", name, plan.building->revision);
      ev.details_json = json{{"kb", name},
                             {"previous", plan.serving ? plan.serving->revision : ""},
                             {"new", plan.building->revision}}
                            .dump();
      cat_->log_event(ev);
    }
    return describe_kb(name);
  }

  void delete_kb(const std::string& name) override {
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    KbConfig config = kb_config(name);
    cat_->delete_kb(name, audit("kb.delete", name, name));
    vectors_->delete_kb(name, config);
    std::error_code ec;
    fs::remove_all(layout_.kb_dir(name), ec);
  }

  // --- ingestion -------------------------------------------------------------------------

  IngestReport ingest_path(const std::string& kb, const std::string& path,
                           const IngestOptions& opts) override {
    auto t0 = std::chrono::steady_clock::now();
    KbConfig config = kb_config(kb);
    const chunk::Chunking chunking = vectors_->write_chunking(kb, config);
    std::error_code ec;
    if (!fs::exists(path, ec))
      throw Error(Code::not_found, "no such file or directory: " + path, {{"path", path}});
    std::vector<ingest::WalkEntry> entries;
    if (fs::is_directory(path, ec)) {
      entries = ingest::walk_directory(path, opts.include, opts.exclude);
    } else {
      entries.push_back({path, fs::path(path).filename().string(), "", ""});
    }
    IngestReport report;
    std::int64_t batch_chunks = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      if (opts.progress) opts.progress(IngestProgress{i, entries.size(), e.relative});
      IngestItem item = ingest_entry(kb, config, chunking, e, opts, &batch_chunks, &report.bytes);
      tally(report, item);
      report.items.push_back(std::move(item));
    }
    if (opts.progress) opts.progress(IngestProgress{entries.size(), entries.size(), ""});
    report.took_ms = ms_since(t0);
    return report;
  }

  IngestItem ingest_bytes(const std::string& kb, const std::string& filename,
                          const std::string& bytes, const IngestOptions& opts) override {
    if (filename.empty() || filename.find('\0') != std::string::npos)
      throw Error(Code::invalid_argument, "a document needs a file name", {{"field", "filename"}});
    KbConfig config = kb_config(kb);
    const chunk::Chunking chunking = vectors_->write_chunking(kb, config);
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    IngestItem item =
        ingest::ingest_document(ctx(chunking), config, kb, filename, bytes, opts, nullptr);
    mark_pending(kb, item);
    return item;
  }

  // --- documents ---------------------------------------------------------------------------

  DocumentPage list_documents(const std::string& kb, const std::string& cursor, int limit,
                              const std::string& filter_json) override {
    if (limit < 1 || limit > 10000)
      throw Error(Code::invalid_argument, "limit must be between 1 and 10000",
                  {{"field", "limit"}});
    auto rows = cat_->list_documents(kb, cursor, limit + 1, core::parse_filter_text(filter_json));
    DocumentPage page;
    if (rows.empty()) return page;
    const KbConfig config = kb_config(kb);
    for (std::size_t i = 0; i < rows.size() && static_cast<int>(i) < limit; ++i)
      page.documents.push_back(with_vectors(to_document(rows[i], layout_), config, rows[i]));
    if (static_cast<int>(rows.size()) > limit) page.next_cursor = page.documents.back().id;
    return page;
  }

  Document get_document(const std::string& kb, const std::string& id) override {
    auto row = doc_row(kb, id);
    return with_vectors(to_document(row, layout_), kb_config(kb), row);
  }

  std::string read_markdown(const std::string& kb, const std::string& id) override {
    auto row = doc_row(kb, id);
    std::string file = ingest::read_whole_file(layout_.markdown_path(kb, id));
    return file.substr(
        std::min<std::size_t>(static_cast<std::size_t>(row.body_offset), file.size()));
  }

  Document edit_document(const std::string& kb, const std::string& id,
                         const std::string& markdown) override {
    const chunk::Chunking chunking = vectors_->write_chunking(kb, kb_config(kb));
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    auto row = doc_row(kb, id);
    std::string body = convert::clean_markdown(markdown);
    auto out = ingest::rewrite_document(ctx(chunking), row, body, nullptr, "document.edit");
    return with_vectors(to_document(out, layout_), kb_config(kb), out);
  }

  Document reconvert_document(const std::string& kb, const std::string& id) override {
    const chunk::Chunking chunking = vectors_->write_chunking(kb, kb_config(kb));
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    auto row = doc_row(kb, id);
    std::string raw = ingest::read_whole_file(layout_.raw_path(kb, id, row.raw_ext));
    auto conv = convert::Registry::builtin().convert({raw, row.filename, row.raw_ext});
    row.converter = conv.converter;
    if (!conv.title.empty()) row.title = conv.title;
    auto out =
        ingest::rewrite_document(ctx(chunking), row, conv.markdown, nullptr, "document.reconvert");
    return with_vectors(to_document(out, layout_), kb_config(kb), out);
  }

  void delete_document(const std::string& kb, const std::string& id) override {
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    auto row = doc_row(kb, id);
    KbConfig config = kb_config(kb);
    cat_->delete_document(kb, id, audit("document.delete", kb, id));
    vectors_->delete_document(kb, config, id);  // then its coordinates (orphans if we die here)
    ingest::remove_file_quietly(layout_.markdown_path(kb, id));
    ingest::remove_file_quietly(layout_.raw_path(kb, id, row.raw_ext));
  }

  std::vector<std::string> delete_where(const std::string& kb,
                                        const std::string& filter_json) override {
    core::Filter f = core::parse_filter_text(filter_json);
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    std::unordered_map<std::string, std::string> ext;
    for (const auto& d : cat_->list_documents(kb, "", 1 << 30, f)) ext[d.id] = d.raw_ext;
    auto ids = cat_->delete_where(kb, f, audit("document.delete_where", kb, filter_json));
    KbConfig config = kb_config(kb);
    for (const auto& id : ids) {
      vectors_->delete_document(kb, config, id);
      ingest::remove_file_quietly(layout_.markdown_path(kb, id));
      ingest::remove_file_quietly(layout_.raw_path(kb, id, ext[id]));
    }
    return ids;
  }

  // --- index lifecycle ---------------------------------------------------------------------

  ReindexReport reindex(const std::string& kb, const ReindexOptions& opts) override {
    KbConfig config = kb_config(kb);
    if (!cache_) cache_ = catalog::EmbedCache::open(layout_.embed_cache_path());
    lifecycle::Scheduler sched(
        *vectors_, *cache_,
        [this](const catalog::DocumentRow& doc, const KbConfig& c) {
          return ingest::rechunk_document(layout_, vectors_->chunking(doc.kb, c), doc);
        },
        opts_.lock_timeout_ms);
    return sched.sweep(kb, config, opts, audit("", kb, ""));
  }

  // --- retrieval ---------------------------------------------------------------------------

  SearchResponse search(const SearchRequest& r) override;
  GrepResponse grep(const GrepRequest& r) override;

  StoreMigrationReport migrate_store(const std::string& kb, const std::string& store_id,
                                     const std::string& store_settings_json) override {
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    KbConfig current = kb_config(kb);
    // The new store's settings replace the old store's (they are per store).
    json cfg = core::kb_config_to_json(current);
    json settings =
        json::parse(store_settings_json.empty() ? "{}" : store_settings_json, nullptr, false);
    if (!settings.is_object())
      throw Error(Code::invalid_argument, "store settings must be a JSON object",
                  {{"field", "store.settings"}});
    cfg["store"]["id"] = store_id;
    cfg["store"]["settings"] = settings;
    KbConfig target = core::kb_config_from_json(cfg);
    if (!cache_) cache_ = catalog::EmbedCache::open(layout_.embed_cache_path());
    return lifecycle::migrate_store(*vectors_, *cat_, *cache_, kb, current, target,
                                    audit("kb.migrate_store", kb, kb));
  }

  // --- activity log and tokens -------------------------------------------------------------

  std::vector<ActivityEntry> activity(const std::string& kb, int limit,
                                      std::int64_t before_id) override {
    if (limit < 1 || limit > 1000)
      throw Error(Code::invalid_argument, "limit must be 1-1000", {{"field", "limit"}});
    std::vector<ActivityEntry> out;
    for (auto& r : cat_->list_audit_before(limit, kb, before_id))
      out.push_back(ActivityEntry{r.id, core::iso8601_utc(r.at), std::move(r.actor),
                                  std::move(r.surface), std::move(r.action), std::move(r.kb),
                                  std::move(r.target), std::move(r.details_json)});
    return out;
  }

  NewToken create_token(const std::string& name, const std::string& scope,
                        const std::vector<std::string>& kbs) override {
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    return engine::mint_token(*cat_, name, scope, kbs, audit("token.create", "", ""));
  }

  std::vector<TokenInfo> list_tokens() override {
    std::vector<TokenInfo> out;
    for (const auto& r : cat_->list_tokens()) out.push_back(engine::token_info(r));
    return out;
  }

  void revoke_token(const std::string& id) override {
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    if (!cat_->revoke_token(id, audit("token.revoke", "", id)))
      throw Error(Code::not_found, "no valid token with id " + id + " (see `quarry token list`)",
                  {{"token", id}});
  }

  std::optional<TokenInfo> authenticate(const std::string& secret) override {
    return engine::find_token(*cat_, secret);
  }

  void set_identity(const std::string& actor, const std::string& surface) override {
    opts_.actor = actor.empty() ? core::os_user() : actor;
    opts_.surface = surface;
  }

 private:
  ingest::WriteContext ctx(const chunk::Chunking& chunking) {
    return ingest::WriteContext{layout_, *cat_, convert::Registry::builtin(), chunking,
                                audit("", "", "")};
  }

  catalog::AuditEntry audit(const std::string& action, const std::string& kb,
                            const std::string& target) const {
    catalog::AuditEntry a;
    a.actor = opts_.actor;
    a.surface = opts_.surface;
    a.action = action;
    a.kb = kb;
    a.target = target;
    return a;
  }

  // The KB's config, parsed once per text of it: parsing was a tenth of a vector search.
  KbConfig kb_config(const std::string& kb) const {
    std::string text = cat_->get_kb(kb).config_json;
    auto& [seen, config] = configs_[kb];
    if (seen != text || text.empty()) {
      config = core::kb_config_from_json(json::parse(text));
      seen = std::move(text);
    }
    return config;
  }

  catalog::DocumentRow doc_row(const std::string& kb, const std::string& id) const {
    cat_->get_kb(kb);
    auto row = cat_->find_document(kb, id);
    if (!row)
      throw Error(Code::not_found, "document " + id + " not found in knowledge base '" + kb + "'",
                  {{"doc_id", id}, {"kb", kb}});
    return *row;
  }

  // Keyword indexing is synchronous: a scope with documents is ready; an empty one not_built.
  static IndexStatus scope_status(bool has_documents) {
    IndexStatus s;
    s.keyword = has_documents ? "ready" : "not_built";
    s.vector = "not_built";
    return s;
  }

  KbInfo info(const catalog::KbRow& kb) {
    KbInfo i;
    i.name = kb.name;
    i.config = core::kb_config_from_json(json::parse(kb.config_json));
    i.config_json = kb.config_json;
    auto st = cat_->kb_stats(kb.name);
    i.documents = st.documents;
    i.chunks = st.chunks;
    i.markdown_bytes = st.markdown_bytes;
    i.source_bytes = st.source_bytes;
    i.created_at = core::iso8601_utc(kb.created_at);
    i.updated_at = core::iso8601_utc(kb.updated_at);
    i.index_status = scope_status(st.documents > 0);
    i.index_status.vector = vectors_->kb_status(kb.name, i.config);
    auto& v = vectors_->for_kb(kb.name, i.config);
    const chunk::Chunking chunking = vectors_->chunking(kb.name, i.config);
    i.config_revision = chunking.revision;
    i.chunk_max_tokens = chunking.options.max_tokens;
    i.chunk_overlap_tokens = chunking.options.overlap_tokens;
    i.chunk_tokenizer = chunking.tokenizer->id();
    i.revision = v.provider ? v.scope.revision : core::revision(i.config, "");
    i.vectors = vectors_->kb_info(kb.name, i.config);
    return i;
  }

  static void tally(IngestReport& r, const IngestItem& item) {
    if (item.status == "added")
      ++r.added;
    else if (item.status == "updated")
      ++r.updated;
    else if (item.status == "unchanged")
      ++r.unchanged;
    else
      ++r.failed;
  }

  IngestItem ingest_entry(const std::string& kb, const KbConfig& config,
                          const chunk::Chunking& chunking, const ingest::WalkEntry& e,
                          const IngestOptions& opts, std::int64_t* batch_chunks,
                          std::int64_t* bytes_total) {
    IngestItem failed;
    failed.path = e.relative;
    failed.status = "failed";
    if (!e.error_code.empty()) {
      failed.code = e.error_code;
      failed.message = e.error_message;
      return failed;
    }
    try {
      std::error_code ec;
      auto size = fs::file_size(e.absolute, ec);  // refuse before reading a huge file
      if (!ec) ingest::check_upload_size(config, e.relative, static_cast<std::int64_t>(size));
      std::string bytes = ingest::read_whole_file(e.absolute);
      *bytes_total += static_cast<std::int64_t>(bytes.size());
      catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
      IngestItem item =
          ingest::ingest_document(ctx(chunking), config, kb, e.relative, bytes, opts, batch_chunks);
      item.path = e.relative;
      mark_pending(kb, item);
      return item;
    } catch (const Error& err) {
      failed.code = code_name(err.code());
      failed.message = err.message();
    } catch (const std::exception& ex) {
      failed.code = "internal";
      failed.message = ex.what();
    }
    return failed;
  }

  // Vectors are the scheduler's (SPEC §7): an ingested document is pending until a sweep
  // (reindex, serve, --wait) embeds it.
  void mark_pending(const std::string& kb, IngestItem& item) {
    if (item.status == "failed" || item.doc_id.empty()) return;
    KbConfig config = kb_config(kb);  // the target revision's, not the chunking in effect
    if (config.embedder.provider.empty()) return;
    if (auto row = cat_->find_document(kb, item.doc_id)) {
      VectorFailure f;  // an unchanged document may carry a tombstone
      item.vector_status = vectors_->document_status(kb, config, *row, &f);
      if (item.vector_status == "failed") {
        item.vector_code = f.code;
        item.vector_message = f.message;
      }
    }
  }

  Document with_vectors(Document d, const KbConfig& config, const catalog::DocumentRow& row) {
    VectorFailure f;
    d.index_status.vector = vectors_->document_status(d.kb, config, row, &f);
    if (d.index_status.vector == "failed") d.vector_failure = f;
    return d;
  }

  void rechunk_all(const std::string& kb, const KbConfig& config, bool dry_run) {
    const chunk::Chunking chunking = vectors_->chunking(kb, config);
    std::string cursor;
    while (true) {
      auto rows = cat_->list_documents(kb, cursor, 500);
      if (rows.empty()) break;
      for (const auto& row : rows) {
        std::string file = ingest::read_whole_file(layout_.markdown_path(kb, row.id));
        std::string body = file.substr(
            std::min<std::size_t>(static_cast<std::size_t>(row.body_offset), file.size()));
        if (dry_run) {
          try {
            chunk::chunk_markdown(body, chunking.options, *chunking.tokenizer);
          } catch (const Error& e) {
            throw Error(e.code(),
                        "cannot apply the new chunking settings: document " + row.id + " (" +
                            row.filename + "): " + e.message(),
                        {{"doc_id", row.id}});
          }
          continue;
        }
        // New chunking is a new revision: set_kb() plans it, the scheduler embeds it.
        ingest::rewrite_document(ctx(chunking), row, body, nullptr, "document.rechunk");
      }
      cursor = rows.back().id;
    }
  }

  EngineOptions opts_;
  core::Layout layout_;
  std::unique_ptr<catalog::Catalog> cat_;
  std::unique_ptr<lifecycle::Vectors> vectors_;
  std::unique_ptr<catalog::EmbedCache> cache_;  // opened by the first reindex
  mutable std::unordered_map<std::string, std::pair<std::string, KbConfig>> configs_;
  std::shared_ptr<lifecycle::foreground::Shared> activity_;  // opened by the first search
  bool activity_opened_ = false;

  lifecycle::foreground::Shared* activity() {
    if (!activity_opened_) {
      activity_ = lifecycle::foreground::shared(layout_.data_dir);
      activity_opened_ = true;
    }
    return activity_.get();
  }
};

SearchResponse EngineImpl::search(const SearchRequest& r) {
  // Background sweeps make way: this process's, and other processes' on this data directory.
  lifecycle::foreground::Query mark(activity());
  auto t0 = std::chrono::steady_clock::now();
  catalog::Catalog::ReadSnapshot snapshot(*cat_);
  KbConfig config = kb_config(r.kb);
  engine::ServingVectors vectors(*vectors_, r.kb, config);
  SearchResponse resp = search::search(r, {*cat_, layout_, r.kb, config, vectors});
  resp.took_ms = ms_since(t0);
  return resp;
}

GrepResponse EngineImpl::grep(const GrepRequest& r) {
  lifecycle::foreground::Query mark(activity());
  auto t0 = std::chrono::steady_clock::now();
  catalog::Catalog::ReadSnapshot snapshot(*cat_);
  KbConfig config = kb_config(r.kb);
  engine::ServingVectors vectors(*vectors_, r.kb, config);
  GrepResponse out = search::grep(r, {*cat_, layout_, r.kb, config, vectors});
  out.took_ms = ms_since(t0);
  return out;
}

}  // namespace

std::unique_ptr<Engine> Engine::open(const EngineOptions& options) {
  return std::make_unique<EngineImpl>(options);
}

}  // namespace quarry
