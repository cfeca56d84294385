#include "catalog/sqlite/memory_index.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "catalog/sqlite/fts_tokenizer.h"
#include "catalog/sqlite/sqlite.h"
#include "quarry/deadline.h"

namespace quarry::catalog {

MemoryIndex::MemoryIndex(sqlite3* db, const FtsTokenizer& tokenizer, std::int64_t kb_id,
                         std::int64_t generation)
    : generation_(generation) {
  Stmt s(db, "SELECT id, title, headings, body FROM chunks WHERE kb_id = ? ORDER BY id");
  s.bind(1, kb_id);
  std::uint64_t total[kFields] = {0, 0, 0};
  std::unordered_map<std::string, std::array<std::uint16_t, kFields>> counts;
  std::string key;
  while (s.step()) {
    const auto chunk = static_cast<std::uint32_t>(rowids_.size());
    rowids_.push_back(s.i64(0));
    counts.clear();
    for (int f = 0; f < kFields; ++f) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s.raw(), f + 1));
      const auto n = static_cast<std::size_t>(sqlite3_column_bytes(s.raw(), f + 1));
      std::uint32_t len = 0;
      tokenizer.tokenize(std::string_view(text ? text : "", n), FTS5_TOKENIZE_DOCUMENT,
                         [&](std::string_view tok, int, int) {
                           ++len;
                           key.assign(tok);
                           auto& c = counts[key];
                           if (c[static_cast<std::size_t>(f)] < UINT16_MAX)
                             ++c[static_cast<std::size_t>(f)];
                         });
      lengths_[f].push_back(len);
      total[f] += len;
    }
    for (auto& [term, c] : counts) postings_[term].push_back(Posting{chunk, {c[0], c[1], c[2]}});
  }
  const double rows = static_cast<double>(rowids_.size());
  for (int f = 0; f < kFields; ++f)
    avg_len_[f] = rows > 0 ? std::max(1.0, static_cast<double>(total[f]) / rows) : 1.0;
}

std::vector<KeywordRow> MemoryIndex::search(const std::vector<std::string>& terms, int limit,
                                            const Bm25Params& p) const {
  // Repeated terms score once per repeat, as repeated FTS5 phrases do.
  std::vector<std::pair<const std::vector<Posting>*, int>> query;
  std::unordered_map<std::string_view, std::size_t> slot;
  std::vector<double> idf;
  const double rows = static_cast<double>(rowids_.size());
  double idf_sum = 0;
  for (const auto& t : terms) {
    auto it = postings_.find(t);
    const double n = it == postings_.end() ? 0.0 : static_cast<double>(it->second.size());
    const double w = p.robertson_idf ? std::max(1e-6, std::log((rows - n + 0.5) / (n + 0.5)))
                                     : std::log(1.0 + (rows - n + 0.5) / (n + 0.5));
    idf_sum += w;
    if (it == postings_.end()) continue;
    auto [pos, fresh] = slot.emplace(t, query.size());
    if (fresh) {
      query.push_back({&it->second, 1});
      idf.push_back(w);
    } else {
      ++query[pos->second].second;
    }
  }
  const double max_score = idf_sum * (p.k1 + 1);

  const double w[kFields] = {p.w_title, p.w_headings, p.w_body};
  thread_local std::vector<double> acc;
  thread_local std::vector<std::uint32_t> touched;
  acc.assign(rowids_.size(), 0.0);
  touched.clear();
  for (std::size_t q = 0; q < query.size(); ++q) {
    check_deadline();  // a common word's postings can be most of the KB
    const double weight = idf[q] * query[q].second * (p.k1 + 1);
    for (const Posting& post : *query[q].first) {
      double tf = 0;
      for (int f = 0; f < kFields; ++f)
        if (post.tf[f])
          tf += post.tf[f] * w[f] / (1.0 - p.b + p.b * lengths_[f][post.chunk] / avg_len_[f]);
      if (tf <= 0) continue;
      if (acc[post.chunk] == 0) touched.push_back(post.chunk);
      acc[post.chunk] += weight * tf / (tf + p.k1);
    }
  }
  auto better = [&](std::uint32_t a, std::uint32_t b) {
    return acc[a] != acc[b] ? acc[a] > acc[b] : rowids_[a] < rowids_[b];
  };
  const std::size_t k = std::min(touched.size(), static_cast<std::size_t>(std::max(limit, 0)));
  std::partial_sort(touched.begin(), touched.begin() + static_cast<long>(k), touched.end(), better);
  std::vector<KeywordRow> out(k);
  for (std::size_t i = 0; i < k; ++i) {
    out[i].rowid = rowids_[touched[i]];
    out[i].raw_score = acc[touched[i]];
    out[i].max_score = max_score;
  }
  return out;
}

}  // namespace quarry::catalog
