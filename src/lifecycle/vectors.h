// The vector half of a KB (SPEC §5, §6): which embedder and store serve it, embedding a
// document's chunks into the store under the KB's current revision, and removing them again.
//
// For now embedding is synchronous, right after the document's keyword indexing commits (the
// lifecycle issue moves it to a background scheduler). A document whose embedding fails keeps
// its keyword index: the failure is reported on the ingest item, never loses the document.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "core/filter.h"
#include "quarry/config.h"
#include "search/semantic.h"
#include "store/vector_store.h"

namespace quarry::embed {
class EmbeddingProvider;
}

namespace quarry::lifecycle {

// A KB's embedder and store, resolved from its config through the selection chains.
struct KbVectors {
  std::shared_ptr<embed::EmbeddingProvider> provider;  // null: no embedder
  std::string unavailable;  // why the KB cannot embed now ("" when it can)
  store::VectorStore* store = nullptr;
  store::Scope scope;  // kb, current revision, dimensions

  bool usable() const { return provider && store && unavailable.empty(); }
  search::VectorSource source() const { return {provider.get(), store, &scope}; }
};

class Vectors {
 public:
  Vectors(std::string data_dir, catalog::Catalog& cat);
  ~Vectors();

  // Resolves (and caches per config) the KB's embedder and store. Never throws for an
  // unavailable embedder: `unavailable` says why. Throws for a config that cannot work at all
  // (unknown provider or store id, an operator pin that is missing).
  KbVectors& for_kb(const std::string& kb, const KbConfig& config);

  // Embeds every chunk of the document and replaces its vectors. Throws on failure.
  void index_document(const std::string& kb, const KbConfig& config, const std::string& doc_id);
  // Whether the document has vectors under the KB's current revision.
  bool has_document(const std::string& kb, const KbConfig& config, const std::string& doc_id);
  // "ready" when every chunk of the KB has a vector under the current revision, else
  // "not_built" (SPEC §1; the lifecycle issue adds stale/failed tracking per document).
  std::string kb_status(const std::string& kb, const KbConfig& config, std::int64_t chunks);

  void delete_document(const std::string& kb, const KbConfig& config, const std::string& doc_id);
  void delete_kb(const std::string& kb, const KbConfig& config);
  // After a revision change: drops vectors of every other revision.
  void drop_other_revisions(const std::string& kb, const KbConfig& config);

 private:
  store::VectorStore& store_for(const KbConfig& config);

  std::string data_dir_;
  catalog::Catalog& cat_;
  std::map<std::string, std::unique_ptr<store::VectorStore>> stores_;  // by id + settings
  std::map<std::string, std::unique_ptr<KbVectors>> kbs_;              // by kb + config
};

}  // namespace quarry::lifecycle
