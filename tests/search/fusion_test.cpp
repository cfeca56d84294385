// Fusion of keyword and vector candidate lists (SPEC §4): interpolation and RRF.
#include <gtest/gtest.h>

#include "numbered.h"
#include "search/fusion.h"

namespace quarry::search {
using quarry::testing::numbered;
namespace {

Hit hit(const std::string& chunk, double raw, double score) {
  Hit h;
  h.chunk_id = chunk;
  h.doc_id = "doc-" + chunk;
  h.raw_score = raw;
  h.score = score;
  return h;
}

std::vector<std::string> ids(const std::vector<Hit>& hits) {
  std::vector<std::string> out;
  for (const auto& h : hits) out.push_back(h.chunk_id);
  return out;
}

TEST(Fusion, InterpolationScalesEachModeOverItsCandidatesAndMixesByRatio) {
  // Keyword: a (10) > b (5) > c (0) scale to 1, 0.5, 0. Vector: c (0.9) > a (0.5) scale to 1, 0.
  std::vector<Hit> kw = {hit("a", 10, 1), hit("b", 5, .5), hit("c", 0, 0)};
  std::vector<Hit> vec = {hit("c", 0.2, 0.9), hit("a", 1.0, 0.5)};
  FusionOptions o;
  o.semantic_ratio = 0.2;
  auto out = fuse(kw, vec, o, 10, 0);
  ASSERT_EQ(ids(out), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_NEAR(out[0].score, 0.8 * 1.0 + 0.2 * 0.0, 1e-12);
  EXPECT_NEAR(out[1].score, 0.8 * 0.5, 1e-12);
  EXPECT_NEAR(out[2].score, 0.2 * 1.0, 1e-12);
  EXPECT_EQ(out[0].metric, "interpolation");

  o.semantic_ratio = 0.9;  // the vector side now dominates
  out = fuse(kw, vec, o, 10, 0);
  EXPECT_EQ(out[0].chunk_id, "c");
}

TEST(Fusion, RatioZeroIsKeywordOrderAndOneIsVectorOrder) {
  std::vector<Hit> kw = {hit("a", 3, 1), hit("b", 2, .6), hit("c", 1, .3)};
  std::vector<Hit> vec = {hit("c", 0.1, 0.95), hit("b", 0.3, 0.85), hit("a", 0.9, 0.55)};
  FusionOptions o;
  o.semantic_ratio = 0;
  EXPECT_EQ(ids(fuse(kw, vec, o, 3, 0)), (std::vector<std::string>{"a", "b", "c"}));
  o.semantic_ratio = 1;
  EXPECT_EQ(ids(fuse(kw, vec, o, 3, 0)), (std::vector<std::string>{"c", "b", "a"}));
}

TEST(Fusion, AdaptiveWeightingFollowsAgreementAndCoverage) {
  // Ten keyword documents k0..k9; the vector list shares `shared` of them at its top.
  auto lists = [](int shared) {
    std::vector<Hit> kw, vec;
    for (int i = 0; i < 10; ++i) kw.push_back(hit("k" + std::to_string(i), 10 - i, 1));
    for (int i = 0; i < 10; ++i)
      vec.push_back(i < shared ? hit("k" + std::to_string(9 - i), 0, 0.9 - 0.01 * i)
                               : hit("v" + std::to_string(i), 0, 0.9 - 0.01 * i));
    return std::make_pair(kw, vec);
  };
  FusionOptions o;
  o.semantic_ratio = 0.2;
  o.weighting = "adaptive";
  auto [kw0, vec0] = lists(0);
  EXPECT_DOUBLE_EQ(query_ratio(kw0, vec0, o), 0.0);  // nothing shared: keyword alone
  // With α_q = 0, the fused order is the keyword order, whatever the vector side says.
  auto out = fuse(kw0, vec0, o, 10, 0);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out[0].chunk_id, "k0");
  auto [kw2, vec2] = lists(2);
  EXPECT_NEAR(query_ratio(kw2, vec2, o), 0.2 * 0.4, 1e-12);  // 2 of 10 shared, full at 5
  auto [kw6, vec6] = lists(6);
  EXPECT_NEAR(query_ratio(kw6, vec6, o), 0.2, 1e-12);
  o.query_coverage = 0.5;  // the embedder knows half the query's words
  EXPECT_NEAR(query_ratio(kw6, vec6, o), 0.2 * 0.0625, 1e-12);
  o.query_coverage = 0.0;
  EXPECT_DOUBLE_EQ(query_ratio(kw6, vec6, o), 0.0);
  o.weighting = "fixed";
  EXPECT_DOUBLE_EQ(query_ratio(kw0, vec0, o), 0.2);
}

TEST(Fusion, RrfIsDividedByItsMaximumSoTheTopOfBothListsScoresOne) {
  std::vector<Hit> kw = {hit("a", 3, 1), hit("b", 2, .6)};
  std::vector<Hit> vec = {hit("a", 0.1, 0.95), hit("c", 0.3, 0.85)};
  FusionOptions o;
  o.fusion = "rrf";
  auto out = fuse(kw, vec, o, 10, 0);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].chunk_id, "a");
  EXPECT_NEAR(out[0].score, 1.0, 1e-12);
  EXPECT_EQ(out[0].metric, "rrf");
  // b and c are both second in one list only: equal fused score, 1/62 / (2/61).
  EXPECT_NEAR(out[1].score, (1.0 / 62) / (2.0 / 61), 1e-12);
  EXPECT_NEAR(out[2].score, out[1].score, 1e-12);
  for (const auto& h : out) {
    EXPECT_GE(h.score, 0);
    EXPECT_LE(h.score, 1);
  }
}

TEST(Fusion, RrfWeightsFavourTheHeavierMode) {
  std::vector<Hit> kw = {hit("k", 3, 1)};
  std::vector<Hit> vec = {hit("v", 0.1, 0.95)};
  FusionOptions o;
  o.fusion = "rrf";
  o.vector_weight = 2;
  EXPECT_EQ(fuse(kw, vec, o, 2, 0).front().chunk_id, "v");
  o.vector_weight = 0.5;
  EXPECT_EQ(fuse(kw, vec, o, 2, 0).front().chunk_id, "k");
}

TEST(Fusion, TopKAndMinScoreBoundTheResult) {
  std::vector<Hit> kw, vec;
  for (int i = 0; i < 20; ++i) kw.push_back(hit(numbered("c", i), 20 - i, 1));
  FusionOptions o;
  EXPECT_EQ(fuse(kw, vec, o, 5, 0).size(), 5u);
  auto some = fuse(kw, vec, o, 20, 0.5);
  ASSERT_FALSE(some.empty());
  for (const auto& h : some) EXPECT_GE(h.score, 0.5);
  EXPECT_LT(some.size(), 20u);
}

TEST(Fusion, SiblingWindowsOfOneSectionCollapseToTheBest) {
  Hit a = hit("w1", 10, 1), b = hit("w2", 9, .9), c = hit("other", 1, .1);
  a.parent_chunk = b.parent_chunk = "section";
  auto out = fuse({a, b, c}, {}, FusionOptions{}, 10, 0);
  EXPECT_EQ(ids(out), (std::vector<std::string>{"w1", "other"}));
}

TEST(Fusion, KeepsTheKeywordSnippetForAChunkFoundByBoth) {
  Hit k = hit("a", 5, 1), v = hit("a", 0.1, 0.9);
  k.snippet = "the **word**";
  v.snippet = "the word";
  auto out = fuse({k}, {v}, FusionOptions{}, 1, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].snippet, "the **word**");
}

}  // namespace
}  // namespace quarry::search
