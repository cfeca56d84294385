// Keyword candidates (the keyword side of a hybrid fusion) are keyword search's hits with only
// their keys read: the same chunks in the same order with the same scores, on the in-memory and
// the FTS5 ranking paths, with sibling windows collapsed the same way.
#include <random>
#include <set>

#include "catalog/catalog_fixture.h"
#include "core/filter.h"
#include "quarry/error.h"
#include "search/keyword.h"

namespace quarry::search {
namespace {
using namespace catalog::testing_support;

class KeywordCandidatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = catalog::Catalog::open((dir_ / "catalog.db").string());
    cat_->kbs().create("kb", "{}", who("kb.create", "kb"));
    std::mt19937 rng(3);
    for (int d = 0; d < 60; ++d) {
      std::vector<std::string> texts;
      const int chunks = 1 + static_cast<int>(rng() % 3);
      for (int c = 0; c < chunks; ++c) {
        std::string t;
        const int len = 4 + static_cast<int>(rng() % 30);
        for (int i = 0; i < len; ++i) t += words_[rng() % words_.size()] + " ";
        texts.push_back(t);
      }
      auto rows = make_chunks(texts);
      // Every fourth document is one oversize section cut into windows.
      if (d % 4 == 0)
        for (auto& c : rows) c.parent_chunk = "section-" + std::to_string(d);
      auto doc = make_doc("kb", "doc" + std::to_string(d) + ".md",
                          d % 2 ? R"({"team": "a"})" : R"({"team": "b"})");
      cat_->documents().put(ref(*cat_, doc.kb), doc, rows, who("document.add", "kb"));
    }
  }

  void expect_same(const std::string& query, const std::string& filter_json = "") {
    const core::Filter filter = core::parse_filter_text(filter_json);
    for (bool memory : {false, true}) {
      cat_->keyword().set_memory_index_enabled(memory);
      // The in-memory copy is built on a KB's second query: ask twice.
      keyword_candidates(*cat_, ref(*cat_, "kb"), query, filter, 20, false);
      auto bare = keyword_candidates(*cat_, ref(*cat_, "kb"), query, filter, 20, false);
      auto full = keyword_search(*cat_, ref(*cat_, "kb"), query, filter, 20, 0, false);
      const std::string where = query + (memory ? " (memory)" : " (fts5)") + filter_json;
      ASSERT_EQ(bare.size(), full.size()) << where;
      std::set<std::string> sections;
      for (std::size_t i = 0; i < bare.size(); ++i) {
        EXPECT_EQ(bare[i].kb, "kb");
        EXPECT_EQ(bare[i].doc_id, full[i].doc_id) << where << " at " << i;
        EXPECT_EQ(bare[i].chunk_index, full[i].chunk_index) << where << " at " << i;
        EXPECT_EQ(bare[i].chunk_id, full[i].chunk_id) << where << " at " << i;
        EXPECT_EQ(bare[i].parent_chunk, full[i].parent_chunk) << where << " at " << i;
        EXPECT_DOUBLE_EQ(bare[i].score, full[i].score) << where << " at " << i;
        EXPECT_DOUBLE_EQ(bare[i].raw_score, full[i].raw_score) << where << " at " << i;
        EXPECT_EQ(bare[i].metric, "bm25");
        // Bare: no row was read, nothing was highlighted.
        EXPECT_TRUE(bare[i].filename.empty());
        EXPECT_TRUE(bare[i].snippet.empty());
        EXPECT_FALSE(full[i].filename.empty());
        if (bare[i].parent_chunk) {
          EXPECT_TRUE(sections.insert(*bare[i].parent_chunk).second)
              << where << ": two windows of " << *bare[i].parent_chunk;
        }
      }
    }
  }

  quarry::testing::TempDir dir_;
  std::unique_ptr<catalog::Catalog> cat_;
  const std::vector<std::string> words_ = {"kinase", "pathway", "tumour",  "binding", "enzyme",
                                           "mouse",  "growth",  "variant", "signal",  "cells"};
};

TEST_F(KeywordCandidatesTest, AreTheSearchsHitsWithOnlyTheirKeys) {
  for (const char* q : {"kinase", "tumour growth", "signal binding enzyme", "mouse cells"})
    expect_same(q);
}

TEST_F(KeywordCandidatesTest, AgreeUnderAMetadataFilter) {
  expect_same("kinase pathway", R"({"team": "a"})");
  expect_same("variant", R"({"team": "b"})");
}

TEST_F(KeywordCandidatesTest, CollapseTheWindowsOfOneSection) {
  // Every word is in most documents, so sections with several windows match more than once.
  std::string all;
  for (const auto& w : words_) all += w + " ";
  auto bare = keyword_candidates(*cat_, ref(*cat_, "kb"), all, {}, 100, false);
  std::set<std::string> sections;
  for (const auto& h : bare)
    if (h.parent_chunk) {
      EXPECT_TRUE(sections.insert(*h.parent_chunk).second) << *h.parent_chunk;
    }
  EXPECT_GE(sections.size(), 10u);
  EXPECT_EQ(keyword_search(*cat_, ref(*cat_, "kb"), all, {}, 100, 0, false).size(), bare.size());
}

TEST_F(KeywordCandidatesTest, AQueryWithoutWordsHasNoCandidatesButAnUnknownKbIsAnError) {
  EXPECT_TRUE(keyword_candidates(*cat_, ref(*cat_, "kb"), "!!! ???", {}, 10, false).empty());
  // The KB is resolved once per request, before any search: an unknown one fails there.
  EXPECT_THROW(ref(*cat_, "nope"), Error);
  EXPECT_THROW(keyword_candidates(*cat_, ref(*cat_, "kb"), "kinase", {}, 0, false), Error);
}

}  // namespace
}  // namespace quarry::search
