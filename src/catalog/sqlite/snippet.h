// Snippets with highlighted terms, computed with the very tokenizer the FTS5 index uses
// (fts_tokenizer.h), so "variants" in a chunk lights up for the query
// word "variant" exactly when the index matched it. Much cheaper than FTS5's snippet(), which
// re-runs the whole MATCH for every row it is asked about.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>
#include <unordered_set>

#include "catalog/keyword_index.h"
#include "catalog/sqlite/fts_tokenizer.h"

namespace quarry::catalog {

class Snippeter {
 public:
  // `query_text`: the words to highlight (FTS5 operators AND/OR/NOT/NEAR are ignored).
  Snippeter(const FtsTokenizer& tokenizer, std::string_view query_text);
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
  const FtsTokenizer& tokenizer_;
  std::unordered_set<std::string> stems_;
};

}  // namespace quarry::catalog
