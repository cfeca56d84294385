#include "catalog/sqlite/snippet.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace quarry::catalog {

Snippeter::Snippeter(const FtsTokenizer& tokenizer, std::string_view query_text)
    : tokenizer_(tokenizer) {
  tokenizer_.tokenize(query_text, FTS5_TOKENIZE_QUERY, [this](std::string_view stem, int, int) {
    if (stem != "and" && stem != "or" && stem != "not" && stem != "near") stems_.emplace(stem);
  });
}

Snippet Snippeter::make(std::string_view text, int window) const {
  std::unordered_map<std::string, int> term_ids;
  std::vector<Token> toks;
  tokenizer_.tokenize(text, FTS5_TOKENIZE_DOCUMENT, [&](std::string_view stem, int start, int end) {
    std::string key(stem);
    bool hit = stems_.count(key) > 0;
    int id = hit ? term_ids.emplace(key, static_cast<int>(term_ids.size())).first->second : -1;
    toks.push_back({start, end, hit, id});
  });
  // Best window: most distinct terms, then most hits; slide over token positions.
  std::size_t n = toks.size(), w = static_cast<std::size_t>(window), best = 0;
  if (n > w) {
    int best_distinct = -1, best_hits = -1;
    std::vector<int> seen(term_ids.size(), 0);
    int distinct = 0, hits = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (toks[i].hit && seen[static_cast<std::size_t>(toks[i].term)]++ == 0) ++distinct;
      hits += toks[i].hit;
      if (i >= w) {
        const Token& out = toks[i - w];
        if (out.hit && --seen[static_cast<std::size_t>(out.term)] == 0) --distinct;
        hits -= out.hit;
      }
      if (i + 1 >= w &&
          (distinct > best_distinct || (distinct == best_distinct && hits > best_hits))) {
        best_distinct = distinct;
        best_hits = hits;
        best = i + 1 - w;
      }
    }
    // Start a few tokens before the first hit so the match has some context.
    for (std::size_t i = best; i < best + w && i < n; ++i)
      if (toks[i].hit) {
        best = i > best + 3 ? i - 3 : best;
        break;
      }
    best = std::min(best, n - w);
  }
  std::size_t last = std::min(n, best + w);
  std::size_t from = n ? static_cast<std::size_t>(best == 0 ? 0 : toks[best].start) : 0;
  std::size_t to = (last == n) ? text.size() : static_cast<std::size_t>(toks[last - 1].end);
  // Two strings at once: `marked` with the ** markers, `plain` without them. The highlights
  // are taken where the markers go (code points of `plain`), so a document's own "**" can
  // never be mistaken for one.
  Snippet out;
  std::string& marked = out.marked;
  std::string& plain = out.text;
  std::size_t plain_cps = 0;
  auto put = [&](std::string_view s) {
    marked += s;
    plain += s;
    for (char ch : s)
      if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++plain_cps;
  };
  if (from > 0) put("…");
  std::size_t pos = from;
  auto append = [&](std::string_view s) {
    for (char ch : s) {
      if (ch == '\n' || ch == '\r' || ch == '\t') {
        if (!plain.empty() && plain.back() != ' ') put(" ");
      } else {
        put(std::string_view(&ch, 1));
      }
    }
  };
  // Hit spans in text order, overlapping and touching ones merged: bigram segmentation gives
  // overlapping tokens ("向量" and "量数") and ICU's words touch ("数据" "库"); each must light
  // up as one run (**数据库**, not **数据****库**).
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (std::size_t i = best; i < last; ++i) {
    if (!toks[i].hit) continue;
    auto s = static_cast<std::size_t>(toks[i].start), e = static_cast<std::size_t>(toks[i].end);
    if (!spans.empty() && s <= spans.back().second)
      spans.back().second = std::max(spans.back().second, e);
    else
      spans.emplace_back(s, e);
  }
  for (auto [s, e] : spans) {
    if (s < pos) s = pos;
    if (e > to) e = to;
    if (s >= e) continue;
    append(text.substr(pos, s - pos));
    marked += "**";
    const std::size_t begin = plain_cps;
    append(text.substr(s, e - s));
    marked += "**";
    out.highlights.emplace_back(begin, plain_cps);
    pos = e;
  }
  append(text.substr(pos, to - pos));
  while (!plain.empty() && plain.back() == ' ') {
    plain.pop_back();
    marked.pop_back();
  }
  if (to < text.size()) put("…");
  return out;
}

}  // namespace quarry::catalog
