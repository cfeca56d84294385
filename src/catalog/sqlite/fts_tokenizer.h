// The tokenizers of the KBs' FTS5 indexes, usable outside a MATCH: for snippets and for the
// in-memory keyword index, which must see exactly the tokens FTS5 indexed.
//
// Each KB's index records the tokenizer it was built with (kbs.keyword_tokenizer, the FTS5
// `tokenize` argument): `porter quarry segmenter icu diacritics fold` for KBs made since issue
// 27 (the `quarry` tokenizer below, wrapped by Porter stemming), `porter unicode61
// remove_diacritics 2` for the KBs made before, which keep it until their keyword settings
// change (then the index is rebuilt, kb_table.cpp).
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>
#include <type_traits>

#include "core/segment.h"

namespace quarry::catalog {

// The tokenizer of the KBs made before the `keyword` settings existed.
inline constexpr const char* kLegacyFtsTokenize = "porter unicode61 remove_diacritics 2";

// The `quarry` FTS5 tokenizer: text folded by nfkc_cf (core/segment.h); runs of unspaced
// scripts cut into words (ICU) or bigrams; everything else left to unicode61 (diacritics
// removed under `diacritics fold`, kept under `keep`), offsets always into the original text.
// Arguments: `segmenter icu|bigram`, `diacritics fold|keep`. Registered on every connection.
void register_quarry_tokenizer(fts5_api* api);

// The FTS5 `tokenize` argument for a KB's stored config (JSON): its `keyword` settings, or the
// legacy tokenizer when it has none.
std::string fts_tokenize_of_config(const std::string& config_json);

// What the query side needs to know of a `tokenize` argument: whether unspaced runs are
// segmented (not under the legacy tokenizer), and how.
core::KeywordAnalysis fts_analysis(std::string_view tokenize);

class FtsTokenizer {
 public:
  // `tokenize`: an FTS5 tokenize argument, such as kLegacyFtsTokenize.
  FtsTokenizer(fts5_api* api, const std::string& tokenize);
  ~FtsTokenizer();
  FtsTokenizer(const FtsTokenizer&) = delete;
  FtsTokenizer& operator=(const FtsTokenizer&) = delete;

  bool ok() const { return tokenizer_ != nullptr; }

  // Calls fn(std::string_view token, int start, int end) for each token of `text`.
  // `flags`: FTS5_TOKENIZE_DOCUMENT or FTS5_TOKENIZE_QUERY.
  template <typename Fn>
  void tokenize(std::string_view text, int flags, Fn&& fn) const {
    if (!ok()) return;
    auto cb = [](void* ctx, int, const char* tok, int n, int start, int end) -> int {
      (*static_cast<std::remove_reference_t<Fn>*>(ctx))(
          std::string_view(tok, static_cast<std::size_t>(n)), start, end);
      return SQLITE_OK;
    };
    run(text, flags, &fn, cb);
  }

 private:
  void run(std::string_view text, int flags, void* ctx,
           int (*cb)(void*, int, const char*, int, int, int)) const;

  fts5_tokenizer api_{};
  Fts5Tokenizer* tokenizer_ = nullptr;
};

}  // namespace quarry::catalog
