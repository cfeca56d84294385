// The embedding cache (SPEC §7): vectors keyed by (embedder identity, chunk text hash), so
// unchanged chunk text is never sent to a provider twice — not after an edit that touches one
// paragraph, not after a chunking change that leaves most chunks' text as it was, not after a
// crash mid-sweep. One SQLite file per data directory (<data>/cache/embeddings.db), separate
// from the catalog: it can be deleted at any time and only costs re-embedding.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace quarry::catalog {

class EmbedCache {
 public:
  // Opens (creating if needed) the SQLite cache at `path` (core::Layout names it).
  // `max_entries` bounds it: the least recently written entries beyond it are pruned when the
  // cache is opened.
  static std::unique_ptr<EmbedCache> open(const std::string& path,
                                          std::int64_t max_entries = 2'000'000);
  virtual ~EmbedCache() = default;

  // For each text, its cached vector under `identity` (empty when absent or of another
  // length than `dimensions`).
  virtual std::vector<std::vector<float>> get(const std::string& identity,
                                              const std::vector<std::string>& texts,
                                              int dimensions) const = 0;
  // Stores vectors[i] for texts[i] under `identity`, in one transaction.
  virtual void put(const std::string& identity, const std::vector<std::string>& texts,
                   const std::vector<std::vector<float>>& vectors) = 0;
  virtual std::int64_t size() const = 0;
};

}  // namespace quarry::catalog
