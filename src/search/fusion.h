// Hybrid fusion (SPEC §4): keyword and vector candidate lists into one ranking.
#pragma once

#include <string>
#include <vector>

#include "quarry/types.h"

namespace quarry::search {

struct FusionOptions {
  std::string fusion = "interpolation";  // interpolation | rrf
  double semantic_ratio = 0.1;           // α: (1 - α)·keyword + α·vector
  int rrf_k = 60;
  double keyword_weight = 1.0;
  double vector_weight = 1.0;
};

// Fuses two best-first candidate lists into at most top_k hits, best first.
//  interpolation: each mode's raw scores min-max scaled over that mode's candidates (a chunk
//    missing from a list scores 0 there), then (1 - α)·keyword + α·vector; already in [0, 1].
//  rrf: Σ w_m / (k + rank_m), divided by its maximum Σ w_m / (k + 1).
// A chunk keeps the keyword hit's snippet when it has one. min_score applies to fused scores.
std::vector<Hit> fuse(const std::vector<Hit>& keyword, const std::vector<Hit>& vector,
                      const FusionOptions& o, int top_k, double min_score);

// How many candidates each mode contributes to a fusion that must return top_k.
int fusion_depth(int top_k);
int vector_fusion_depth(int top_k);

}  // namespace quarry::search
