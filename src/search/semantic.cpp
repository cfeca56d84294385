#include "search/semantic.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "embed/provider.h"
#include "quarry/error.h"
#include "search/hits.h"
#include "search/keyword.h"
#include "store/vector_store.h"

namespace quarry::search {

int fusion_depth(int top_k) {
  return std::max(50, top_k * 2);
}
int vector_fusion_depth(int top_k) {
  return std::min(1000, std::max(200, top_k * 4));
}

std::vector<Hit> vector_candidates(const std::string& kb, const std::string& query,
                                   const core::Filter& filter, int depth, const VectorSource& src) {
  store::Query q;
  q.vector = src.provider->embed_query(query);
  q.filter = filter;
  q.top_k = depth;
  std::vector<Hit> out;
  for (auto& f : src.store->query(*src.scope, q)) {
    Hit h;
    h.kb = kb;
    h.doc_id = std::move(f.doc_id);
    h.chunk_index = f.chunk_index;
    h.chunk_id = std::move(f.chunk_id);
    h.raw_score = f.raw_score;
    h.score = f.score;
    h.metric = std::move(f.metric);
    out.push_back(std::move(h));
  }
  return out;
}

void complete_hits(const catalog::Catalog& cat, const std::string& kb, const std::string& query,
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
      loaded = std::min(hits.size(), i + (want - kept.size()) + kSpare);
      std::vector<catalog::Catalog::ChunkKey> keys;
      std::vector<std::size_t> at;
      for (std::size_t j = i; j < loaded; ++j)
        if (hits[j].filename.empty()) {
          keys.push_back({hits[j].doc_id, hits[j].chunk_index});
          at.push_back(j);
        }
      if (!keys.empty()) {
        auto rows = cat.load_chunks(kb, keys);
        for (std::size_t j = 0; j < at.size(); ++j) {
          Hit& h = hits[at[j]];
          auto& r = rows[j];
          if (!r.loaded || (!h.chunk_id.empty() && h.chunk_id != r.chunk.chunk_id)) {
            stale[at[j]] = true;
            continue;
          }
          std::string snippet = std::move(h.snippet);
          texts[at[j]] = std::move(r.chunk.text);
          h = make_hit(r, h.score, h.raw_score, h.metric);
          h.snippet = std::move(snippet);
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
  auto snips = cat.snippets(match_expression(query, advanced), need);
  for (std::size_t j = 0; j < need_at.size(); ++j) kept[need_at[j]].snippet = std::move(snips[j]);
  hits = std::move(kept);
}

std::vector<Hit> vector_search(const catalog::Catalog& cat, const std::string& kb,
                               const std::string& query, const core::Filter& filter, int top_k,
                               double min_score, const VectorSource& src) {
  if (top_k < 1 || top_k > 1000)
    throw Error(Code::invalid_argument, "top_k must be between 1 and 1000", {{"field", "top_k"}});
  if (min_score < 0 || min_score > 1)
    throw Error(Code::invalid_argument, "min_score must be between 0 and 1",
                {{"field", "min_score"}});
  // Sibling windows of one oversize section collapse to the best, and stale vectors are
  // dropped: ask for a few more than top_k.
  auto hits = vector_candidates(kb, query, filter, top_k * 2 + 10, src);
  std::erase_if(hits, [&](const Hit& h) { return h.score < min_score; });
  complete_hits(cat, kb, query, hits, top_k);
  return hits;
}

namespace {

struct Scaled {
  double lo = 0, hi = 0;
  double operator()(double x) const { return hi > lo ? (x - lo) / (hi - lo) : 1.0; }
};

// What interpolation scales: BM25's raw score for keyword hits; for vector hits the [0, 1]
// score, which orders as the cosine distance does (reversed) and is higher-is-better.
double fusion_value(const Hit& h, bool is_keyword) {
  return is_keyword ? h.raw_score : h.score;
}

Scaled scale_of(const std::vector<Hit>& list, bool is_keyword) {
  Scaled s;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const double v = fusion_value(list[i], is_keyword);
    s.lo = i == 0 ? v : std::min(s.lo, v);
    s.hi = i == 0 ? v : std::max(s.hi, v);
  }
  return s;
}

}  // namespace

std::vector<Hit> fuse(const std::vector<Hit>& keyword, const std::vector<Hit>& vector,
                      const FusionOptions& o, int top_k, double min_score) {
  struct Entry {
    const Hit* hit = nullptr;  // keyword's hit when present (it has the highlighted snippet)
    double score = 0;
  };
  std::unordered_map<std::string, Entry> by_chunk;
  std::vector<std::string> order;  // first appearance, for deterministic ties
  const bool rrf = o.fusion == "rrf";
  const double alpha = o.semantic_ratio;
  const double rrf_max = o.keyword_weight / (o.rrf_k + 1.0) + o.vector_weight / (o.rrf_k + 1.0);

  auto add = [&](const std::vector<Hit>& list, bool is_keyword) {
    const Scaled sc = scale_of(list, is_keyword);
    for (std::size_t rank = 0; rank < list.size(); ++rank) {
      const Hit& h = list[rank];
      double part;
      if (rrf) {
        part = (is_keyword ? o.keyword_weight : o.vector_weight) /
               (o.rrf_k + static_cast<double>(rank) + 1.0);
      } else {
        double v = sc(fusion_value(h, is_keyword));
        part = (is_keyword ? 1.0 - alpha : alpha) * v;
      }
      auto [it, fresh] = by_chunk.try_emplace(h.chunk_id);
      if (fresh) {
        it->second.hit = &h;
        order.push_back(h.chunk_id);
      }
      it->second.score += part;
    }
  };
  add(keyword, true);
  add(vector, false);

  std::vector<std::pair<double, std::size_t>> ranked;
  ranked.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    double s = by_chunk[order[i]].score;
    if (rrf) s = rrf_max > 0 ? s / rrf_max : 0;
    ranked.push_back({std::clamp(s, 0.0, 1.0), i});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Hit> out;
  std::unordered_set<std::string> parents;
  for (const auto& [score, i] : ranked) {
    if (static_cast<int>(out.size()) >= top_k || score < min_score) break;
    const Entry& e = by_chunk[order[i]];
    if (e.hit->parent_chunk && !parents.insert(*e.hit->parent_chunk).second) continue;
    Hit h = *e.hit;
    h.score = score;
    h.raw_score = by_chunk[order[i]].score;
    h.metric = rrf ? "rrf" : "interpolation";
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace quarry::search
