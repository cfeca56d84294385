// The vector half of a KB (SPEC §1, §5–§7): which embedder and store serve it, which
// revisions (vector spaces) it has and in which state, and what every document's vector index
// status is.
//
// A KB has at most two revisions with vectors at any time: the `serving` one, which answers
// vector queries (embedded with its own embedder: a query never meets vectors of another
// revision), and either one `building` (a blue-green re-embedding after the embedder changed)
// or one `previous` (kept after a cut-over, so switching back is instant, until the next
// reconciliation collects it). The revisions table holds the config each one was made with.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "catalog/catalog.h"
#include "chunk/chunking.h"
#include "core/filter.h"
#include "embed/provider.h"
#include "quarry/config.h"
#include "quarry/types.h"
#include "store/vector_store.h"

namespace quarry::lifecycle {

// A KB's embedder and store for one config, resolved through the selection chains.
struct KbVectors {
  std::shared_ptr<embed::EmbeddingProvider> provider;  // null: no embedder
  std::string unavailable;  // why the KB cannot embed now ("" when it can)
  // Its code: blocked_address when the SSRF guard refuses the embedder's endpoint (a setting
  // to change), else engine_unavailable; ok when the KB can embed.
  Code unavailable_code = Code::ok;
  store::VectorStore* store = nullptr;
  store::Scope scope;  // kb, revision, dimensions
  std::string model;   // the embedder identity
  // The embedder's own tokenizer and input limit in text tokens, as it was when this was
  // resolved (null: none, or not loadable then; chunks are counted by the approximation).
  std::shared_ptr<const core::Tokenizer> tokenizer;
  int token_limit = 0;
  std::string tokenizer_key;  // embed::chunking_key of the two: part of both revisions

  bool usable() const { return provider && store && unavailable.empty(); }
};

// The KB's revisions after plan(): what serves, what builds.
struct RevisionPlan {
  std::optional<catalog::RevisionRow> serving;
  std::optional<catalog::RevisionRow> building;
  std::optional<catalog::RevisionRow> previous;
};

// What plan() does to a KB's revisions for a config, decided before it does it (preview()).
struct RevisionChange {
  // none | unchanged | first | blue_green | replace | switch_back | drop: see
  // quarry::KbChangePlan::vectors.
  std::string kind = "none";
  std::string serving_revision;  // "" when nothing serves
  std::string serving_config_revision;
  std::string target_revision;  // the config's ("" without an embedder)
  std::string target_config_revision;
};

// Looks a secret up by name (the secret store, then the environment); "" when unknown.
using SecretLookup = std::function<std::string(const std::string&)>;

class Vectors {
 public:
  Vectors(std::string data_dir, catalog::Catalog& cat, SecretLookup secret);
  ~Vectors();

  // Functions that read or write the catalog take the KB resolved for the request (a KbRef);
  // those that only resolve an embedder and a store take its name (they run before a new KB
  // exists and after a deleted one is gone).
  //
  // Resolves (and caches per config) an embedder and store. Never throws for an unavailable
  // embedder: `unavailable` says why. Throws for a config that cannot work at all (unknown
  // provider or store id, an operator pin that is missing).
  KbVectors& for_kb(const std::string& kb, const KbConfig& config);
  // The vectors that answer queries: the serving revision's (made with its own config),
  // or the current config's when nothing serves yet.
  KbVectors& serving(const catalog::KbRef& kb, const KbConfig& config);

  // Brings the revisions table in line with `config` (the caller holds the writer lock):
  // creates the serving revision of a KB that has none, starts a blue-green build when the
  // revision changed and the serving one has vectors (or switches at once when it has none,
  // when `immediate`, or when the store changed), cancels a build the config went back from,
  // and drops revisions beyond the two allowed. `collect_previous` also drops the revision a
  // cut-over left behind. Only these destructive steps happen here; embedding is the
  // scheduler's.
  RevisionPlan plan(const catalog::KbRef& kb, const KbConfig& config, bool immediate = false,
                    bool collect_previous = false);
  // What plan(kb, config, immediate) would do, read-only: plan() acts on this very decision.
  RevisionChange preview(const catalog::KbRef& kb, const KbConfig& config, bool immediate = false);
  // Makes a complete building revision the serving one (the old one becomes previous). When
  // the chunking changed, the building revision's staged chunks become the documents' chunks
  // in the same transaction, and the old revision is dropped (its chunks are gone).
  void cut_over(const catalog::KbRef& kb, const catalog::RevisionRow& building);
  // How documents are cut under `config`: its budgets within its embedder's input limit, in
  // that embedder's tokens when it has a tokenizer.
  chunk::Chunking chunking(const std::string& kb, const KbConfig& config);
  // How documents are cut now: under the KB's config, except that while a build with other
  // chunking runs, the serving revision's chunking still applies; the building revision's
  // chunks are staged beside them until the cut-over.
  chunk::Chunking write_chunking(const catalog::KbRef& kb, const KbConfig& config);

  // Index status (SPEC §1) of one document / of the KB's documents matching `filter`,
  // worst case wins. `building` marks what a sweep in this process is working on.
  // `failure` (optional) receives the tombstone of a failed document.
  std::string document_status(const catalog::KbRef& kb, const KbConfig& config,
                              const catalog::DocumentRow& doc, VectorFailure* failure = nullptr);
  std::string kb_status(const catalog::KbRef& kb, const KbConfig& config,
                        const core::Filter& filter = {});
  VectorIndexInfo kb_info(const catalog::KbRef& kb, const KbConfig& config);

  // Forgets a document's vectors in every revision, then its coordinates.
  void delete_document(const catalog::KbRef& kb, const KbConfig& config, const std::string& doc_id);
  void delete_kb(const std::string& kb_name, const KbConfig& config);
  // Drops vectors (and coordinates) of documents that no longer exist; returns how many.
  int collect_orphans(const catalog::KbRef& kb, const KbConfig& config);

  // A sweep in this process marks the KB (and the documents in flight) as building.
  void set_building(const std::string& kb, bool on) {
    if (on)
      building_kbs_.insert(kb);
    else
      building_kbs_.erase(kb);
  }
  std::set<std::string>& in_flight() { return in_flight_; }

  catalog::Catalog& catalog() { return cat_; }
  const std::string& data_dir() const { return data_dir_; }

 private:
  store::VectorStore& store_for(const KbConfig& config);
  catalog::RevisionRow row_for(const KbVectors& v, const KbConfig& config,
                               const std::string& state) const;
  void drop_revision(const catalog::KbRef& kb, const catalog::RevisionRow& r,
                     const std::string& keep);

  std::string data_dir_;
  catalog::Catalog& cat_;
  SecretLookup secret_;
  // For KBs whose embedder has no tokenizer: version 1, and version 2 for chunking.segmenter icu.
  std::unique_ptr<chunk::Tokenizer> approx_;
  std::unique_ptr<chunk::Tokenizer> approx_words_;
  std::map<std::string, std::unique_ptr<store::VectorStore>> stores_;           // by id + settings
  std::map<std::string, std::unique_ptr<KbVectors>> kbs_;                       // by kb + config
  std::map<std::string, std::shared_ptr<embed::EmbeddingProvider>> providers_;  // by embedder
  std::set<std::string> building_kbs_;
  std::set<std::string> in_flight_;  // document ids a sweep is embedding now
  struct CachedStatus {
    std::pair<std::int64_t, std::int64_t> generations;
    std::string key;
    catalog::VectorCounts counts;
    std::int64_t local_changes = -1;  // the catalog connection's own writes when counted
    std::chrono::steady_clock::time_point at{};
  };
  std::map<std::string, CachedStatus> status_cache_;  // by kb
};

}  // namespace quarry::lifecycle
