// The tokenizer of every KB's FTS5 index (porter over unicode61, diacritics folded), usable
// outside a MATCH: for snippets and for the in-memory keyword index, which must see exactly the
// tokens FTS5 indexed.
#pragma once

#include <sqlite3.h>

#include <string_view>

namespace quarry::catalog {

// The tokenizer arguments of the per-KB FTS5 tables (schema.cpp creates them with these).
inline constexpr const char* kFtsTokenize = "porter unicode61 remove_diacritics 2";

class FtsTokenizer {
 public:
  explicit FtsTokenizer(fts5_api* api);
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
      (*static_cast<Fn*>(ctx))(std::string_view(tok, static_cast<std::size_t>(n)), start, end);
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
