#include "catalog/sqlite/fts_tokenizer.h"

namespace quarry::catalog {

FtsTokenizer::FtsTokenizer(fts5_api* api) {
  if (!api) return;
  void* user = nullptr;
  if (api->xFindTokenizer(api, "porter", &user, &api_) != SQLITE_OK) return;
  const char* args[] = {"unicode61", "remove_diacritics", "2"};
  if (api_.xCreate(user, args, 3, &tokenizer_) != SQLITE_OK) tokenizer_ = nullptr;
}

FtsTokenizer::~FtsTokenizer() {
  if (tokenizer_) api_.xDelete(tokenizer_);
}

void FtsTokenizer::run(std::string_view text, int flags, void* ctx,
                       int (*cb)(void*, int, const char*, int, int, int)) const {
  api_.xTokenize(tokenizer_, ctx, flags, text.data(), static_cast<int>(text.size()), cb);
}

}  // namespace quarry::catalog
