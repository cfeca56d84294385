// The Engine's knowledge bases (SPEC §1): create, list, describe, change (a new revision builds
// blue-green, SPEC §7), delete, and moving a KB's vectors to another store (SPEC §6).
#include <filesystem>
#include <nlohmann/json.hpp>

#include "catalog/writer_lock.h"
#include "core/kb_config.h"
#include "core/util.h"
#include "embed/provider.h"
#include "engine/engine_impl.h"
#include "ingest/staging.h"
#include "lifecycle/migrate.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace quarry::engine {
namespace {

// An embedder endpoint the SSRF guard refuses is a configuration error (SPEC §10): refused when
// a KB is created or its embedder changes, not found out at the first embedding.
void check_embedder_endpoint(const KbConfig& c) {
  if (c.embedder.provider.empty()) return;
  const json settings =
      c.embedder.settings_json.empty() ? json::object() : json::parse(c.embedder.settings_json);
  if (auto refused = embed::endpoint_refusal(embed::parse_spec(c.embedder.provider, settings),
                                             "embedder.settings"))
    throw *refused;
}

// A new KB's config. What it leaves out takes today's defaults, and chunking.segmenter's is icu
// (a stored config without the key is one made before it: none).
KbConfig parse_new_config(const std::string& text) {
  json j = text.empty() ? json::object() : json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw Error(Code::invalid_argument, "config is not valid JSON", {{"field", "config"}});
  KbConfig config = core::kb_config_from_json(j);
  const bool segmenter_given = j.is_object() && j.contains("chunking") &&
                               j["chunking"].is_object() && j["chunking"].contains("segmenter");
  if (!segmenter_given) config.chunking.segmenter = "icu";
  return config;
}

// Keyword indexing is synchronous: a scope with documents is ready; an empty one not_built.
IndexStatus scope_status(bool has_documents) {
  IndexStatus s;
  s.keyword = has_documents ? "ready" : "not_built";
  s.vector = "not_built";
  return s;
}

}  // namespace

KbInfo EngineImpl::create_kb(const std::string& name, const std::string& config_json) {
  core::validate_kb_name(name);
  KbConfig config = parse_new_config(config_json);
  vectors_->for_kb(name, config);  // unknown provider/store ids fail before anything is made
  check_embedder_endpoint(config);
  catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
  std::error_code ec;
  if (!cat_->kbs().find(name)) {
    // Orphans of a crash between a delete's catalog commit and its cleanup: files, and
    // vectors a store still keeps under this name (never let them into the new KB).
    fs::remove_all(layout_.kb_dir(name), ec);
    vectors_->delete_kb(name, config);
  }
  auto row = cat_->kbs().create(name, core::kb_config_to_json(config).dump(),
                                audit("kb.create", name, name));
  vectors_->plan(row.ref(), config);  // its (empty) serving revision
  fs::create_directories(layout_.docs_dir(name), ec);
  fs::create_directories(layout_.raw_dir(name), ec);
  return info(cat_->kbs().get(name));
}

std::vector<KbInfo> EngineImpl::list_kbs() {
  std::vector<KbInfo> out;
  for (const auto& kb : cat_->kbs().list()) out.push_back(info(kb));
  return out;
}

KbInfo EngineImpl::describe_kb(const std::string& name) {
  return info(cat_->kbs().get(name));
}

EngineImpl::KbChange EngineImpl::decide_kb_change(
    const Kb& kb, const std::vector<std::pair<std::string, std::string>>& settings,
    bool cutover_immediate) {
  const std::string& name = kb.ref.name;
  const KbConfig& before = kb.config;
  KbConfig after = before;
  for (const auto& [k, v] : settings) after = core::kb_config_set(after, k, v);
  if (after.embedder.provider != before.embedder.provider ||
      after.embedder.settings_json != before.embedder.settings_json)
    check_embedder_endpoint(after);
  const auto stats = cat_->kbs().stats(kb.ref);
  if (after.subjects.keys != before.subjects.keys && stats.documents > 0)
    throw Error(Code::conflict,
                "subject keys cannot change while the knowledge base has documents; create a new "
                "knowledge base with them and ingest into it: `quarry kb create NEW --config '" +
                    nlohmann::json{{"subjects", {{"keys", after.subjects.keys}}}}.dump() + "'`",
                {{"field", "subjects.keys"}});
  const bool store_changed =
      after.store.id != before.store.id ||
      json::parse(after.store.settings_json) != json::parse(before.store.settings_json);
  if (store_changed && vectors_->kb_info(kb.ref, before).stored > 0)
    throw Error(Code::conflict,
                "'" + name +
                    "' has vectors in its store: move them with `quarry kb migrate-store " + name +
                    " --to " + after.store.id + "` (no re-embedding)",
                {{"field", "store"}});
  KbChange out;
  json changes = json::object();
  for (const auto& [k, v] : settings) changes[k] = v;
  out.audit_details = changes.dump();
  KbChangePlan& p = out.plan;
  p.kb = name;
  p.config = after;
  p.config_json = core::kb_config_to_json(after).dump();
  p.documents = stats.documents;
  p.chunks = stats.chunks;
  p.chunks_after = stats.chunks;
  // New budgets, or an embedder that counts tokens another way, cut documents anew.
  const chunk::Chunking cut_before = vectors_->chunking(name, before);
  const chunk::Chunking cut_after = vectors_->chunking(name, after);
  p.config_revision_before = cut_before.revision;
  p.config_revision_after = cut_after.revision;
  auto revision_of = [&](const KbConfig& c) {
    auto& v = vectors_->for_kb(name, c);
    return v.provider ? v.scope.revision : core::revision(c, "");
  };
  p.revision_before = revision_of(before);
  p.revision_after = revision_of(after);
  p.re_cut = cut_before.revision != cut_after.revision;
  // Chunk every document under the new settings first: if one would fail (too_many_chunks,
  // ...), nothing is changed, rather than half the KB chunked one way and half the other.
  if (p.re_cut) p.chunks_after = rechunk_all(Kb{kb.ref, after}, /*dry_run=*/true);
  // A new revision builds in the background (reindex / serve) while the serving one answers
  // (SPEC §7). New chunking is part of it: the building revision's chunks are staged beside
  // the serving ones and replace them at the cut-over, so keyword and vector hits keep
  // coming from one chunking. Without vectors to keep (no embedder, nothing embedded yet,
  // --cutover immediate) the KB is re-chunked now.
  const lifecycle::RevisionChange rc = vectors_->preview(kb.ref, after, cutover_immediate);
  p.vectors = rc.kind;
  p.re_embed = rc.kind == "first" || rc.kind == "blue_green" || rc.kind == "replace";
  const bool staged =
      rc.kind == "blue_green" && rc.target_config_revision != rc.serving_config_revision;
  if (p.re_cut) p.re_cut_at = staged ? "cutover" : "now";
  return out;
}

KbChangePlan EngineImpl::plan_kb_change(
    const std::string& name, const std::vector<std::pair<std::string, std::string>>& settings,
    bool cutover_immediate) {
  if (settings.empty())
    throw Error(Code::invalid_argument, "nothing to set: pass key=value pairs",
                {{"field", "settings"}});
  // A reader: no writer lock, nothing written.
  return decide_kb_change(resolve(name), settings, cutover_immediate).plan;
}

KbInfo EngineImpl::set_kb(const std::string& name,
                          const std::vector<std::pair<std::string, std::string>>& settings,
                          bool cutover_immediate) {
  if (settings.empty())
    throw Error(Code::invalid_argument, "nothing to set: pass key=value pairs",
                {{"field", "settings"}});
  catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
  const Kb kb = resolve(name);
  const KbChange change = decide_kb_change(kb, settings, cutover_immediate);
  const KbConfig& after = change.plan.config;
  auto a = audit("kb.set", name, name);
  a.details_json = change.audit_details;
  cat_->kbs().update_config(kb.ref, change.plan.config_json, a);
  // plan() acts on the decision decide_kb_change() read (Vectors::preview, under this lock).
  auto plan = vectors_->plan(kb.ref, after, cutover_immediate);
  if (change.plan.re_cut_at == "now") rechunk_all(Kb{kb.ref, after}, /*dry_run=*/false);
  if (plan.building) {
    auto ev = audit("reembed_started", name, plan.building->revision);
    ev.details_json = json{{"kb", name},
                           {"previous", plan.serving ? plan.serving->revision : ""},
                           {"new", plan.building->revision}}
                          .dump();
    cat_->audit().append(ev);
  }
  return info(cat_->kbs().get(name));
}

void EngineImpl::delete_kb(const std::string& name) {
  catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
  const Kb kb = resolve(name);
  cat_->kbs().remove(kb.ref, audit("kb.delete", name, name));
  vectors_->delete_kb(name, kb.config);
  std::error_code ec;
  fs::remove_all(layout_.kb_dir(name), ec);
}

StoreMigrationReport EngineImpl::migrate_store(const std::string& name, const std::string& store_id,
                                               const std::string& store_settings_json,
                                               const StoreMigrationOptions& options) {
  catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
  const Kb kb = resolve(name);
  // The new store's settings replace the old store's (they are per store).
  json cfg = core::kb_config_to_json(kb.config);
  json settings =
      json::parse(store_settings_json.empty() ? "{}" : store_settings_json, nullptr, false);
  if (!settings.is_object())
    throw Error(Code::invalid_argument, "store settings must be a JSON object",
                {{"field", "store.settings"}});
  cfg["store"]["id"] = store_id;
  cfg["store"]["settings"] = settings;
  KbConfig target = core::kb_config_from_json(cfg);
  return lifecycle::migrate_store(*vectors_, *cat_, embed_cache(), kb.ref, kb.config, target,
                                  audit("kb.migrate_store", name, name), options);
}

KbInfo EngineImpl::info(const catalog::KbRow& row) {
  const catalog::KbRef kb = row.ref();
  KbInfo i;
  i.name = row.name;
  i.config = parsed_config(row.name, row.config_json);
  i.config_json = row.config_json;
  auto st = cat_->kbs().stats(kb);
  i.documents = st.documents;
  i.chunks = st.chunks;
  i.markdown_bytes = st.markdown_bytes;
  i.source_bytes = st.source_bytes;
  i.created_at = core::iso8601_utc(row.created_at);
  i.updated_at = core::iso8601_utc(row.updated_at);
  i.index_status = scope_status(st.documents > 0);
  i.index_status.vector = vectors_->kb_status(kb, i.config);
  auto& v = vectors_->for_kb(kb.name, i.config);
  const chunk::Chunking chunking = vectors_->chunking(kb.name, i.config);
  i.config_revision = chunking.revision;
  i.chunk_max_tokens = chunking.options.max_tokens;
  i.chunk_overlap_tokens = chunking.options.overlap_tokens;
  i.chunk_tokenizer = chunking.tokenizer->id();
  i.revision = v.provider ? v.scope.revision : core::revision(i.config, "");
  i.vectors = vectors_->kb_info(kb, i.config);
  return i;
}

std::int64_t EngineImpl::rechunk_all(const Kb& kb, bool dry_run) {
  const chunk::Chunking chunking = vectors_->chunking(kb.ref.name, kb.config);
  std::int64_t chunks = 0;
  std::string cursor;
  while (true) {
    auto rows = cat_->documents().list(kb.ref, cursor, 500);
    if (rows.empty()) break;
    for (const auto& row : rows) {
      std::string file = ingest::read_whole_file(layout_.markdown_path(kb.ref.name, row.id));
      std::string body = file.substr(
          std::min<std::size_t>(static_cast<std::size_t>(row.body_offset), file.size()));
      if (dry_run) {
        try {
          chunks += static_cast<std::int64_t>(
              chunk::chunk_markdown(body, chunking.options, *chunking.tokenizer).size());
        } catch (const Error& e) {
          throw Error(e.code(),
                      "cannot apply the new chunking settings: document " + row.id + " (" +
                          row.filename + "): " + e.message(),
                      {{"doc_id", row.id}});
        }
        continue;
      }
      // New chunking is a new revision: set_kb() plans it, the scheduler embeds it.
      ingest::rewrite_document(write_context(kb.ref, chunking), row, body, nullptr,
                               "document.rechunk");
    }
    cursor = rows.back().id;
  }
  return chunks;
}

}  // namespace quarry::engine
