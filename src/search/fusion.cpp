#include "search/fusion.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace quarry::search {

int fusion_depth(int top_k) {
  return std::max(50, top_k * 2);
}
int vector_fusion_depth(int top_k) {
  return std::min(1000, std::max(200, top_k * 4));
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

// The first `k` distinct documents of a best-first list.
std::vector<std::string> top_docs(const std::vector<Hit>& list, std::size_t k) {
  std::vector<std::string> out;
  for (const Hit& h : list) {
    if (out.size() >= k) break;
    if (std::find(out.begin(), out.end(), h.doc_id) == out.end()) out.push_back(h.doc_id);
  }
  return out;
}

}  // namespace

double query_ratio(const std::vector<Hit>& keyword, const std::vector<Hit>& vector,
                   const FusionOptions& o) {
  if (o.weighting != "adaptive") return o.semantic_ratio;
  constexpr std::size_t kTop = 10;     // documents compared at the top of each list
  constexpr double kFullAgreement = 0.5;  // half of them shared: the full ratio
  const auto kw = top_docs(keyword, kTop);
  const auto vec = top_docs(vector, kTop);
  std::size_t shared = 0;
  for (const auto& d : kw)
    if (std::find(vec.begin(), vec.end(), d) != vec.end()) ++shared;
  const double agreement =
      std::min(1.0, static_cast<double>(shared) / static_cast<double>(kTop) / kFullAgreement);
  const double c = std::clamp(o.query_coverage.value_or(1.0), 0.0, 1.0);
  return o.semantic_ratio * agreement * (c * c) * (c * c);
}

std::vector<Hit> fuse(const std::vector<Hit>& keyword, const std::vector<Hit>& vector,
                      const FusionOptions& o, int top_k, double min_score) {
  struct Entry {
    const Hit* hit = nullptr;  // keyword's hit when present (it has the highlighted snippet)
    double score = 0;
  };
  std::unordered_map<std::string, Entry> by_chunk;
  std::vector<std::string> order;  // first appearance, for deterministic ties
  const bool rrf = o.fusion == "rrf";
  const double alpha = rrf ? o.semantic_ratio : query_ratio(keyword, vector, o);
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
