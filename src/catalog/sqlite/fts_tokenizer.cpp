#include "catalog/sqlite/fts_tokenizer.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace quarry::catalog {
namespace {

std::vector<std::string> words_of(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// One `quarry` tokenizer: its settings and the unicode61 it hands spaced text to.
struct QuarryTokenizer {
  fts5_tokenizer inner{};
  Fts5Tokenizer* inner_tok = nullptr;
  core::Segmenter segmenter = core::Segmenter::icu;
};

int quarry_create(void* ctx, const char** az, int n, Fts5Tokenizer** out) {
  auto* api = static_cast<fts5_api*>(ctx);
  auto t = std::make_unique<QuarryTokenizer>();
  bool fold_diacritics = true;
  for (int i = 0; i + 1 < n; i += 2) {
    const std::string_view k = az[i], v = az[i + 1];
    if (k == "segmenter" && (v == "icu" || v == "bigram"))
      t->segmenter = core::segmenter_from_name(v);
    else if (k == "diacritics" && (v == "fold" || v == "keep"))
      fold_diacritics = v == "fold";
    else
      return SQLITE_ERROR;
  }
  if (n % 2) return SQLITE_ERROR;
  void* user = nullptr;
  if (api->xFindTokenizer(api, "unicode61", &user, &t->inner) != SQLITE_OK) return SQLITE_ERROR;
  const char* args[] = {"remove_diacritics", fold_diacritics ? "2" : "0"};
  if (t->inner.xCreate(user, args, 2, &t->inner_tok) != SQLITE_OK) return SQLITE_ERROR;
  *out = reinterpret_cast<Fts5Tokenizer*>(t.release());
  return SQLITE_OK;
}

void quarry_delete(Fts5Tokenizer* p) {
  auto* t = reinterpret_cast<QuarryTokenizer*>(p);
  if (t->inner_tok) t->inner.xDelete(t->inner_tok);
  delete t;
}

using TokenFn = int (*)(void*, int, const char*, int, int, int);

// unicode61's tokens of one spaced run, their offsets moved back into the original text.
struct SpacedRun {
  const core::Folded* folded;
  std::size_t base;
  void* ctx;
  TokenFn emit;
};

int spaced_token(void* p, int tflags, const char* tok, int n, int start, int end) {
  auto* r = static_cast<SpacedRun*>(p);
  const auto [b, e] = r->folded->original(r->base + static_cast<std::size_t>(start),
                                          r->base + static_cast<std::size_t>(end));
  return r->emit(r->ctx, tflags, tok, n, static_cast<int>(b), static_cast<int>(e));
}

int quarry_tokenize(Fts5Tokenizer* p, void* ctx, int flags, const char* text, int n,
                    TokenFn emit) {
  auto* t = reinterpret_cast<QuarryTokenizer*>(p);
  const std::string_view in(text ? text : "", static_cast<std::size_t>(n > 0 ? n : 0));
  bool ascii = true;
  for (char c : in)
    if (static_cast<unsigned char>(c) >= 0x80) {
      ascii = false;
      break;
    }
  // English and code: exactly unicode61's tokens, nothing folded or copied.
  if (ascii) return t->inner.xTokenize(t->inner_tok, ctx, flags, text, n, emit);
  const core::Folded f = core::fold(in);
  const std::string_view ft = f.text;
  int rc = SQLITE_OK;
  core::script_runs(ft, [&](std::size_t b, std::size_t e, bool unspaced) {
    if (rc != SQLITE_OK) return;
    if (!unspaced) {
      SpacedRun r{&f, b, ctx, emit};
      rc = t->inner.xTokenize(t->inner_tok, &r, flags, ft.data() + b, static_cast<int>(e - b),
                              spaced_token);
      return;
    }
    core::segment_run(ft.substr(b, e - b), t->segmenter, [&](std::size_t wb, std::size_t we) {
      if (rc != SQLITE_OK) return;
      const auto [ob, oe] = f.original(b + wb, b + we);
      rc = emit(ctx, 0, ft.data() + b + wb, static_cast<int>(we - wb), static_cast<int>(ob),
                static_cast<int>(oe));
    });
  });
  return rc;
}

}  // namespace

void register_quarry_tokenizer(fts5_api* api) {
  if (!api) return;
  fts5_tokenizer t{quarry_create, quarry_delete, quarry_tokenize};
  api->xCreateTokenizer(api, "quarry", api, &t, nullptr);
}

std::string fts_tokenize_of_config(const std::string& config_json) {
  const auto j = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("keyword") || !j["keyword"].is_object())
    return kLegacyFtsTokenize;
  const auto& k = j["keyword"];
  const std::string seg = k.value("segmenter", std::string("icu"));
  const std::string dia = k.value("diacritics", std::string("fold"));
  return "porter quarry segmenter " + seg + " diacritics " + dia;
}

core::KeywordAnalysis fts_analysis(std::string_view tokenize) {
  core::KeywordAnalysis a;
  const auto w = words_of(tokenize);
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] == "quarry") a.segmented = true;
    if (w[i] == "segmenter" && i + 1 < w.size() && w[i + 1] == "bigram")
      a.segmenter = core::Segmenter::bigram;
  }
  return a;
}

FtsTokenizer::FtsTokenizer(fts5_api* api, const std::string& tokenize) {
  if (!api) return;
  const auto w = words_of(tokenize);
  if (w.empty()) return;
  void* user = nullptr;
  if (api->xFindTokenizer(api, w[0].c_str(), &user, &api_) != SQLITE_OK) return;
  std::vector<const char*> args;
  for (std::size_t i = 1; i < w.size(); ++i) args.push_back(w[i].c_str());
  if (api_.xCreate(user, args.data(), static_cast<int>(args.size()), &tokenizer_) != SQLITE_OK)
    tokenizer_ = nullptr;
}

FtsTokenizer::~FtsTokenizer() {
  if (tokenizer_) api_.xDelete(tokenizer_);
}

void FtsTokenizer::run(std::string_view text, int flags, void* ctx,
                       int (*cb)(void*, int, const char*, int, int, int)) const {
  api_.xTokenize(tokenizer_, ctx, flags, text.data(), static_cast<int>(text.size()), cb);
}

}  // namespace quarry::catalog
