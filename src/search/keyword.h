// Keyword mode (SPEC §4): user text -> a safe FTS5 expression -> BM25F over one KB's chunks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "quarry/types.h"

namespace quarry::search {

// Turns free text into an FTS5 MATCH expression that can never be a syntax error: words are
// extracted, lower-cased, stopwords dropped (unless nothing else is left), duplicates removed,
// each quoted as an FTS5 string and OR-ed. Returns "" when the text has no words.
// `analysis`: how the KB's index cuts text (Catalog::keyword().analysis); a segmented index has
// the query folded and its unspaced-script runs (CJK, Thai, ...) cut into the index's words or
// bigrams, each a term of its own.
std::string safe_match_expression(const std::string& text, bool drop_stopwords = true,
                                  const core::KeywordAnalysis& analysis = {});

// The words safe_match_expression would search for (for tests and explanations).
std::vector<std::string> query_terms(const std::string& text, bool drop_stopwords = true,
                                     const core::KeywordAnalysis& analysis = {});

bool is_stopword(const std::string& lowercase_word);

struct KeywordParams {
  catalog::Bm25Params bm25;
  bool collapse_windows = true;  // keep only the best window of an oversize section
  bool snippets = true;
  bool drop_stopwords = true;
};

// Runs keyword search; hits carry score = raw / theoretical max in [0, 1], metric "bm25".
std::vector<Hit> keyword_search(const catalog::Catalog& cat, const catalog::KbRef& kb,
                                const std::string& query, const core::Filter& filter, int top_k,
                                double min_score, bool advanced, const KeywordParams& params = {});

// The same ranking as bare hits (kb, doc_id, chunk_index, chunk_id, parent_chunk, scores): only
// each chunk's key is read, so a fusion can rank many candidates and read the rows of its
// winners only (complete_hits in search/hits.h). Sibling windows collapse as above.
std::vector<Hit> keyword_candidates(const catalog::Catalog& cat, const catalog::KbRef& kb,
                                    const std::string& query, const core::Filter& filter, int depth,
                                    bool advanced, const KeywordParams& params = {});

// The MATCH expression of a keyword query (the text itself when `advanced`), which is also what
// its snippets highlight (Catalog::snippets).
std::string match_expression(const std::string& query, bool advanced, bool drop_stopwords = true,
                             const core::KeywordAnalysis& analysis = {});

// Refuses an advanced (FTS5) query whose shape FTS5 would only call "syntax error near ...":
// an unclosed phrase or group, a stray ')', an operator with nothing before or after it. The
// error (invalid_argument, field `query`) says at which character and what is wrong.
void check_advanced_query(std::string_view query);

}  // namespace quarry::search
