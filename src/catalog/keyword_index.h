// The keyword index (SPEC §4): one BM25F index per KB over its chunks' title, headings and body,
// written with the documents (DocumentTable) and read here: ranked keys first (cheap), then
// the rows and snippets of the hits a caller keeps.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "catalog/rows.h"
#include "core/segment.h"

namespace quarry::catalog {

// A highlighted snippet: `marked` wraps each matched term in ** **; `text` is the same snippet
// without those markers (a document's own "**" stay in both), and `highlights` the matched
// terms as [begin, end) offsets into `text` in Unicode code points, taken where the markers go.
struct Snippet {
  std::string marked;
  std::string text;
  std::vector<std::pair<std::size_t, std::size_t>> highlights;
};

class KeywordIndex {
 public:
  virtual ~KeywordIndex() = default;

  // Ranked rowids and scores only. Throws invalid_argument for a malformed MATCH expression
  // (only reachable through the opt-in advanced syntax).
  virtual std::vector<KeywordRow> search(const KbRef& kb, const KeywordQuery& q) const = 0;
  // The same ranking from this process's in-memory copy of the KB's index: built on a KB's
  // second keyword query and rebuilt after any write to the KB. `words` are the safe query's
  // words; nullopt when the query must go to search() (no copy yet, or a word the tokenizer
  // splits into several tokens, i.e. a phrase).
  virtual std::optional<std::vector<KeywordRow>> search_cached(
      const KbRef& kb, const std::vector<std::string>& words, int limit,
      const Bm25Params& p) const = 0;
  // Off: every keyword query goes to search() (tests compare the two paths).
  virtual void set_memory_index_enabled(bool on) = 0;

  // Fills doc and chunk of ranked rows (loaded = true; rows whose chunk is gone stay unloaded).
  virtual void load_rows(KeywordRow* begin, KeywordRow* end) const = 0;
  // Only what identifies each chunk (doc.id; chunk.index, chunk_id, parent_chunk), for a
  // fusion that ranks many candidates and reads the rows of its winners only (load_chunks).
  virtual void load_keys(KeywordRow* begin, KeywordRow* end) const = 0;
  // Rows for chunk keys of `kb`; a key whose chunk no longer exists comes back unloaded.
  virtual std::vector<KeywordRow> load_chunks(const KbRef& kb,
                                              const std::vector<ChunkKey>& keys) const = 0;
  // How the KB's index cuts text (its tokenizer, kbs.keyword_tokenizer): the query side splits
  // words the same way. Throws not_found for an unknown KB.
  virtual core::KeywordAnalysis analysis(const KbRef& kb) const = 0;
  // Highlighted snippets of `texts` for the words of `query`, cut and stemmed as the KB's index
  // cuts and stems them.
  virtual std::vector<Snippet> snippets(const KbRef& kb, const std::string& query,
                                        const std::vector<const std::string*>& texts) const = 0;
};

}  // namespace quarry::catalog
