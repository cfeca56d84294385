#include "search/hits.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "quarry/deadline.h"

#include "search/keyword.h"

namespace quarry::search {

Hit make_hit(catalog::KeywordRow& r, double score, double raw_score, const std::string& metric) {
  Hit h;
  h.kb = r.doc.kb;
  h.doc_id = r.doc.id;
  h.filename = r.doc.filename;
  h.title = r.doc.title;
  h.chunk_id = r.chunk.chunk_id;
  h.chunk_index = r.chunk.index;
  h.parent_chunk = r.chunk.parent_chunk;
  h.heading_path = std::move(r.chunk.heading_path);
  h.offset = r.chunk.offset;
  h.length = r.chunk.length;
  h.raw_score = raw_score;
  h.score = score;
  h.metric = metric;
  if (r.doc.subject_key && r.doc.subject_value)
    h.subject = Subject{*r.doc.subject_key, *r.doc.subject_value};
  h.metadata_json = std::move(r.doc.metadata_json);
  return h;
}

void set_snippet(Hit& h, catalog::Snippet s) {
  h.snippet = std::move(s.marked);
  h.snippet_text = std::move(s.text);
  h.highlights = std::move(s.highlights);
}

std::vector<std::pair<std::size_t, std::size_t>> code_point_ranges(
    const std::string& text, const std::vector<std::pair<std::size_t, std::size_t>>& bytes) {
  auto at = [&text](std::size_t byte) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < byte && i < text.size(); ++i)
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
    return n;
  };
  std::vector<std::pair<std::size_t, std::size_t>> out;
  out.reserve(bytes.size());
  for (const auto& [b, e] : bytes) out.emplace_back(at(b), at(e));
  return out;
}

void complete_hits(const catalog::Catalog& cat, const catalog::KbRef& kb, const std::string& query,
                   std::vector<Hit>& hits, int top_k, bool advanced, const std::vector<Hit>* done) {
  if (done) {
    std::unordered_map<std::string_view, const Hit*> by_chunk;
    for (const Hit& d : *done) by_chunk.emplace(d.chunk_id, &d);
    for (Hit& h : hits) {
      auto it = h.filename.empty() ? by_chunk.find(h.chunk_id) : by_chunk.end();
      if (it == by_chunk.end()) continue;
      Hit full = *it->second;
      full.score = h.score;
      full.raw_score = h.raw_score;
      full.metric = std::move(h.metric);
      h = std::move(full);
    }
  }
  // Candidates are loaded in order, only as many as can still be kept (plus a couple for
  // collapsed siblings and stale vectors): a top 10 reads about 12 chunk rows, not all 30
  // candidates. Those rows are most of a vector query's time.
  constexpr std::size_t kSpare = 2;
  const std::size_t want = static_cast<std::size_t>(std::max(top_k, 0));
  std::vector<bool> stale(hits.size(), false);
  std::vector<std::string> texts(hits.size());
  std::vector<Hit> kept;
  std::vector<const std::string*> need;
  std::vector<std::size_t> need_at;
  std::unordered_set<std::string> parents;
  for (std::size_t i = 0, loaded = 0; i < hits.size() && kept.size() < want; ++i) {
    if (i == loaded) {
      check_deadline();
      loaded = std::min(hits.size(), i + (want - kept.size()) + kSpare);
      std::vector<catalog::ChunkKey> keys;
      std::vector<std::size_t> at;
      for (std::size_t j = i; j < loaded; ++j)
        if (hits[j].filename.empty()) {
          keys.push_back({hits[j].doc_id, hits[j].chunk_index});
          at.push_back(j);
        }
      if (!keys.empty()) {
        auto rows = cat.keyword().load_chunks(kb, keys);
        for (std::size_t j = 0; j < at.size(); ++j) {
          Hit& h = hits[at[j]];
          auto& r = rows[j];
          if (!r.loaded || (!h.chunk_id.empty() && h.chunk_id != r.chunk.chunk_id)) {
            stale[at[j]] = true;
            continue;
          }
          std::string snippet = std::move(h.snippet), snippet_text = std::move(h.snippet_text);
          auto highlights = std::move(h.highlights);
          texts[at[j]] = std::move(r.chunk.text);
          h = make_hit(r, h.score, h.raw_score, h.metric);
          h.snippet = std::move(snippet);
          h.snippet_text = std::move(snippet_text);
          h.highlights = std::move(highlights);
        }
      }
    }
    if (stale[i]) continue;
    if (hits[i].parent_chunk && !parents.insert(*hits[i].parent_chunk).second) continue;
    if (hits[i].snippet.empty() && !texts[i].empty()) {
      need.push_back(&texts[i]);
      need_at.push_back(kept.size());
    }
    kept.push_back(std::move(hits[i]));
  }
  auto snips = cat.keyword().snippets(kb, match_expression(query, advanced), need);
  for (std::size_t j = 0; j < need_at.size(); ++j)
    set_snippet(kept[need_at[j]], std::move(snips[j]));
  hits = std::move(kept);
}

}  // namespace quarry::search
