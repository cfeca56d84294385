// The in-memory keyword index must rank exactly as quarry_bm25() over FTS5: same rows, same
// scores, same theoretical maximum, for any query and parameters, and follow every write.
#include <random>

#include "catalog_fixture.h"
#include "search/keyword.h"

namespace quarry::catalog {
namespace {
using namespace testing_support;

class MemoryIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = Catalog::open((dir_ / "catalog.db").string());
    cat_->kbs().create("kb", "{}", who("kb.create", "kb"));
    std::mt19937 rng(7);
    // Zipf-ish vocabulary with inflections the porter stemmer folds (cell/cells/celled).
    const std::vector<std::string> words = {
        "cell",   "cells",  "protein", "proteins", "gene",    "genes",   "mouse", "mice",
        "cancer", "tumour", "tumor",   "growth",   "death",   "naïve",   "naive", "binding",
        "binds",  "bound",  "signal",  "pathway",  "enzyme",  "kinase",  "rare",  "variant",
        "common", "effect", "larger",  "mapping",  "genomes", "project", "the",   "and"};
    std::discrete_distribution<std::size_t> pick(
        words.size(), 0, 1, [&](double x) { return 1.0 / (1.0 + x * words.size()); });
    for (int d = 0; d < 150; ++d) {
      std::vector<std::string> texts;
      int chunks = 1 + static_cast<int>(rng() % 3);
      for (int c = 0; c < chunks; ++c) {
        std::string t;
        int len = 3 + static_cast<int>(rng() % 60);
        for (int i = 0; i < len; ++i) t += words[pick(rng)] + (i % 9 == 8 ? ". " : " ");
        texts.push_back(t);
      }
      auto doc = make_doc("kb", "doc" + std::to_string(d) + ".md");
      doc.title = words[pick(rng)] + " " + words[pick(rng)];
      cat_->documents().put(ref(*cat_, doc.kb), doc, make_chunks(texts), who("document.add", "kb"));
    }
    words_ = words;
  }

  // Ranks `query` through FTS5 (memory index off) and through the memory index.
  void expect_same(const std::string& query, const Bm25Params& p, int limit) {
    KeywordQuery q;
    q.match = search::safe_match_expression(query);
    q.params = p;
    q.limit = limit;
    cat_->keyword().set_memory_index_enabled(false);
    auto fts = cat_->keyword().search(ref(*cat_, "kb"), q);
    cat_->keyword().set_memory_index_enabled(true);
    auto terms = search::query_terms(query);
    std::optional<std::vector<KeywordRow>> mem;
    for (int i = 0; i < 2 && !mem; ++i)
      mem = cat_->keyword().search_cached(ref(*cat_, "kb"), terms, limit, p);
    ASSERT_TRUE(mem.has_value()) << query;
    ASSERT_EQ(fts.size(), mem->size()) << query;
    for (std::size_t i = 0; i < fts.size(); ++i) {
      EXPECT_NEAR(fts[i].raw_score, (*mem)[i].raw_score, 1e-9 * (1 + fts[i].raw_score)) << query;
      EXPECT_NEAR(fts[i].max_score, (*mem)[i].max_score, 1e-9 * (1 + fts[i].max_score)) << query;
      // Equal scores may come in either order; distinct ones must not.
      if (i + 1 < fts.size() && fts[i].raw_score - fts[i + 1].raw_score > 1e-9) {
        EXPECT_EQ(fts[i].rowid, (*mem)[i].rowid) << query << " at " << i;
      }
    }
  }

  quarry::testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
  std::vector<std::string> words_;
};

TEST_F(MemoryIndexTest, RanksExactlyAsTheFts5RankFunctionOnRandomQueries) {
  std::mt19937 rng(11);
  for (int i = 0; i < 200; ++i) {
    std::string query;
    int n = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < n; ++k) query += words_[rng() % words_.size()] + " ";
    Bm25Params p;
    p.k1 = 0.5 + (rng() % 10) / 5.0;
    p.b = (rng() % 11) / 10.0;
    p.w_title = (rng() % 4);
    p.robertson_idf = rng() % 2;
    expect_same(query, p, 1 + static_cast<int>(rng() % 40));
  }
}

TEST_F(MemoryIndexTest, RepeatedWordsWeighAsRepeatedPhrases) {
  expect_same("cell cell protein", Bm25Params{}, 20);
  expect_same("rare rare rare variant", Bm25Params{}, 20);
}

TEST_F(MemoryIndexTest, IsNotBuiltForAOneShotQueryAndFollowsWrites) {
  auto terms = search::query_terms("zebrafish");
  EXPECT_FALSE(
      cat_->keyword().search_cached(ref(*cat_, "kb"), terms, 10, {}).has_value());  // first query
  auto hits = cat_->keyword().search_cached(ref(*cat_, "kb"), terms, 10, {});
  ASSERT_TRUE(hits.has_value());
  EXPECT_TRUE(hits->empty());
  cat_->documents().put(ref(*cat_, "kb"), make_doc("kb", "zebra.md"),
                        make_chunks({"zebrafish embryos"}), who("document.add", "kb"));
  hits = cat_->keyword().search_cached(ref(*cat_, "kb"), terms, 10, {});
  ASSERT_TRUE(hits.has_value());
  EXPECT_EQ(hits->size(), 1u) << "a write must invalidate the in-memory copy";
}

TEST_F(MemoryIndexTest, AWordTheTokenizerSplitsGoesToFts5) {
  // "a∑b" is one query word to Quarry but a two-token phrase to the index tokenizer.
  auto terms = std::vector<std::string>{"cell∑protein"};
  cat_->keyword().search_cached(ref(*cat_, "kb"), {"cell"}, 10, {});
  EXPECT_FALSE(cat_->keyword().search_cached(ref(*cat_, "kb"), terms, 10, {}).has_value());
}

}  // namespace
}  // namespace quarry::catalog
