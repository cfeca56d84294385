// Snippets with highlighted terms, computed with the very tokenizer the FTS5 index uses
// (fts_tokenizer.h), so "variants" in a chunk lights up for the query
// word "variant" exactly when the index matched it. Much cheaper than FTS5's snippet(), which
// re-runs the whole MATCH for every row it is asked about.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "catalog/keyword_index.h"
#include "catalog/sqlite/fts_tokenizer.h"

namespace quarry::catalog {

class Snippeter {
 public:
  // `query_text`: the words to highlight (FTS5 operators AND/OR/NOT/NEAR are ignored).
  // `segmented`: the tokenizer is Quarry's (fts_analysis(...).segmented), whose unspaced runs
  // (Chinese, Japanese, Thai, ...) are cut by a dictionary: make() then cuts only the runs that
  // can hold a query term (see tokenize_lazily).
  Snippeter(const FtsTokenizer& tokenizer, std::string_view query_text, bool segmented = false);
  Snippeter(const Snippeter&) = delete;
  Snippeter& operator=(const Snippeter&) = delete;

  // About `window` tokens of `text` around the densest run of query terms, matches wrapped in
  // ** ** (`marked`; `text` and `highlights` say the same without markers), newlines folded
  // to spaces, "…" where the text was cut.
  Snippet make(std::string_view text, int window = 32) const;

 private:
  struct Token {
    int start, end;
    bool hit;
    int term;
  };
  template <typename Fn>
  void tokenize_lazily(std::string_view text, Fn&& fn) const;

  const FtsTokenizer& tokenizer_;
  std::unordered_set<std::string> stems_;
  bool segmented_ = false;
  std::vector<std::string> wide_stems_;  // the stems that are not ASCII
};

}  // namespace quarry::catalog
