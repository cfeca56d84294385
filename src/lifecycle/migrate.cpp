#include "lifecycle/migrate.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "core/kb_config.h"
#include "quarry/error.h"

namespace quarry::lifecycle {
namespace {
using nlohmann::json;

// Removes whatever a failed attempt wrote to the target, then reports why.
[[noreturn]] void abandon(store::VectorStore& target, const std::string& kb, const Error& why) {
  try {
    target.delete_kb(kb);
  } catch (const Error&) {  // the reason below matters more than the cleanup
  }
  throw why;
}

}  // namespace

StoreMigrationReport migrate_store(Vectors& vectors, catalog::Catalog& cat,
                                   catalog::EmbedCache& cache, const catalog::KbRef& ref,
                                   const KbConfig& current, const KbConfig& target,
                                   const catalog::AuditEntry& audit,
                                   const StoreMigrationOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string& kb = ref.name;
  if (cat.revisions().in_state(ref, "building"))
    throw Error(Code::conflict,
                "a re-embedding of '" + kb +
                    "' is in progress: migrate once it has cut over "
                    "(see `quarry status`)",
                {{"kb", kb}});
  auto serving = cat.revisions().in_state(ref, "serving");
  KbVectors& src = vectors.for_kb(kb, current);
  KbVectors& dst = vectors.for_kb(kb, target);
  if (!serving || !src.store || !src.provider)
    throw Error(Code::invalid_argument,
                "'" + kb + "' has no vectors to move (no embedder): set store.id instead",
                {{"kb", kb}});
  if (!dst.store) throw Error(Code::invalid_argument, "no target store", {{"field", "store.id"}});
  if (dst.store == src.store)
    throw Error(Code::invalid_argument, "'" + kb + "' already uses this store with these settings",
                {{"kb", kb}});
  if (!dst.store->is_available())
    throw Error(Code::upstream_error,
                "the " + dst.store->id() + " store is not reachable: check its settings",
                {{"store", dst.store->id()}});

  StoreMigrationReport r;
  r.kb = kb;
  r.from_store = src.store->id();
  r.to_store = dst.store->id();
  r.revision = serving->revision;
  store::Scope scope{kb, serving->revision, src.scope.dimensions};

  dst.store->delete_kb(kb);  // what an earlier, interrupted attempt left
  std::int64_t missing = 0;
  std::string cursor;
  const std::int64_t total = options.progress ? cat.documents().count_matching(ref, Filter{}) : 0;
  std::int64_t seen = 0;
  while (true) {
    if (options.cancel && options.cancel->load())
      abandon(*dst.store, kb,
              Error(Code::cancelled,
                    "stopped before the switch after copying " + std::to_string(r.chunks) +
                        " vectors; nothing changed: '" + kb + "' still uses " + r.from_store +
                        " (run the same command again to start the copy over)",
                    {{"kb", kb}}));
    auto docs = cat.documents().list(ref, cursor, 200);
    if (docs.empty()) break;
    seen += static_cast<std::int64_t>(docs.size());
    cursor = docs.back().id;
    std::vector<store::DocumentVectors> page;
    for (const auto& d : docs) {
      bool current_vectors = false;
      for (const auto& c : cat.revisions().coordinates_of(ref, d.id))
        current_vectors = current_vectors ||
                          (c.revision == serving->revision && c.content_sha256 == d.content_sha256);
      if (!current_vectors) {
        ++r.pending;
        continue;
      }
      auto chunks = cat.documents().chunks_of(ref, d.id);
      std::vector<std::string> texts;
      for (const auto& c : chunks) texts.push_back(c.text);
      auto vecs = cache.get(src.model, texts, scope.dimensions);
      store::DocumentVectors dv;
      dv.doc_id = d.id;
      dv.metadata_json = d.metadata_json;  // the catalog keeps an object's text
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        if (vecs[i].empty()) {
          ++missing;
          continue;
        }
        dv.chunks.push_back({chunks[i].index, chunks[i].chunk_id, std::move(vecs[i]), ""});
      }
      if (dv.chunks.size() != chunks.size()) continue;
      ++r.documents;
      r.chunks += static_cast<std::int64_t>(dv.chunks.size());
      page.push_back(std::move(dv));
    }
    try {  // a page of documents per store call
      if (!page.empty()) dst.store->upsert_many(scope, page);
    } catch (const Error& e) {
      abandon(*dst.store, kb, e);
    }
    if (options.progress) options.progress(seen, total);
  }
  if (missing > 0)
    abandon(*dst.store, kb,
            Error(Code::conflict,
                  "the embedding cache no longer holds " + std::to_string(missing) +
                      " chunk vectors of '" + kb +
                      "', so they cannot move without "
                      "re-embedding; nothing changed",
                  {{"kb", kb}, {"missing_chunks", std::to_string(missing)}}));
  const std::int64_t counted = dst.store->count(scope);
  if (counted != r.chunks)
    abandon(*dst.store, kb,
            Error(Code::internal,
                  "the " + r.to_store + " store counts " + std::to_string(counted) +
                      " vectors after copying " + std::to_string(r.chunks) + "; nothing changed",
                  {{"kb", kb}}));

  // The switch: config, revision row and coordinates together. The revision left for an
  // instant switch back lives in the old store: it goes too.
  {
    catalog::Catalog::Batch batch(cat);
    auto a = audit;
    a.action = "kb.migrate_store";
    a.kb = kb;
    a.target = kb;
    a.details_json = json{
        {"from", r.from_store},
        {"to", r.to_store},
        {"revision", r.revision},
        {"chunks",
         r.chunks}}.dump();
    if (auto previous = cat.revisions().in_state(ref, "previous"))
      cat.revisions().remove(ref, previous->revision);
    cat.kbs().update_config(ref, core::kb_config_to_json(target).dump(), a);
    cat.revisions().move_coordinates(ref, serving->revision, r.to_store);
    vectors.plan(ref, target);  // the revision row follows the config (same revision)
    batch.commit();
  }
  src.store->delete_kb(kb);
  r.took_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace quarry::lifecycle
