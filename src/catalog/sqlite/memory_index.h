// An in-memory copy of one KB's keyword index, for processes that search a KB more than once
// (servers, the library, benchmarks). FTS5 stays the durable index; this copy holds, per
// stemmed term, the chunks containing it with their per-field term frequencies, so a query
// scores only the postings of its own terms in a flat accumulator instead of asking FTS5 to
// evaluate its expression and call quarry_bm25() row by row.
//
// It must rank exactly as quarry_bm25() does (same tokenizer, statistics and formula), so the
// two paths are interchangeable; tests/catalog checks that they agree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "catalog/rows.h"
#include "catalog/sqlite/sqlite.h"

namespace quarry::catalog {

class FtsTokenizer;

class MemoryIndex {
 public:
  // Reads every chunk of the KB and tokenizes title, headings and body as FTS5 did.
  MemoryIndex(sqlite3* db, const FtsTokenizer& tokenizer, std::int64_t kb_id,
              std::int64_t generation);

  std::int64_t generation() const { return generation_; }

  // Ranks chunks for `terms` (stemmed tokens, repeats allowed: each repeat counts once more),
  // best first, at most `limit`. Scores and max_score as quarry_bm25().
  std::vector<KeywordRow> search(const std::vector<std::string>& terms, int limit,
                                 const Bm25Params& p) const;

 private:
  static constexpr int kFields = 3;
  struct Posting {
    std::uint32_t chunk;  // index into rowids_
    std::uint16_t tf[kFields];
  };
  std::int64_t generation_;
  std::vector<std::int64_t> rowids_;
  std::vector<std::uint32_t> lengths_[kFields];
  double avg_len_[kFields] = {1, 1, 1};
  std::unordered_map<std::string, std::vector<Posting>> postings_;
};

}  // namespace quarry::catalog
