// Hybrid fusion (SPEC §4): keyword and vector candidate lists into one ranking.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "quarry/types.h"

namespace quarry::search {

struct FusionOptions {
  std::string fusion = "interpolation";  // interpolation | rrf
  double semantic_ratio = 0.3;           // α: (1 - α)·keyword + α·vector (adaptive: at most)
  std::string weighting = "fixed";       // fixed | adaptive (a KB's default: HybridConfig)
  // The share of the query's tokens the embedder has vectors for (adaptive weighting); nullopt
  // when the embedder cannot tell.
  std::optional<double> query_coverage;
  int rrf_k = 60;
  double keyword_weight = 1.0;
  double vector_weight = 1.0;
};

// Fuses two best-first candidate lists into at most top_k hits, best first.
//  interpolation: each mode's raw scores min-max scaled over that mode's candidates (a chunk
//    missing from a list scores 0 there), then (1 - α)·keyword + α·vector; already in [0, 1].
//  rrf: Σ w_m / (k + rank_m), divided by its maximum Σ w_m / (k + 1).
// Adaptive weighting (interpolation only) gives each query its own α_q = α · a · c⁴, where a =
// min(1, 2 · the share of the keyword list's first 10 documents that are also among the vector
// list's first 10) and c = query_coverage (1 when unknown): a vector list that finds other
// documents than the words do, or an embedder that cannot read the query's words, gets less
// say. Chosen by leave-one-collection-out over the shared collections (docs/benchmarks.md).
// A chunk keeps the keyword hit's snippet when it has one. min_score applies to fused scores.
std::vector<Hit> fuse(const std::vector<Hit>& keyword, const std::vector<Hit>& vector,
                      const FusionOptions& o, int top_k, double min_score);

// The α a query gets under `o` (adaptive weighting above, or the fixed ratio).
double query_ratio(const std::vector<Hit>& keyword, const std::vector<Hit>& vector,
                   const FusionOptions& o);

// How many candidates each mode contributes to a fusion that must return top_k.
int fusion_depth(int top_k);
int vector_fusion_depth(int top_k);

}  // namespace quarry::search
