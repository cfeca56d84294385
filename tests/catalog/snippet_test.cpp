// Snippets over segmented text (issue 27): the Snippeter skips the dictionary segmentation of
// unspaced pieces that cannot hold a query term. Highlights must be exactly those of tokenizing
// the whole text, for ICU words and bigrams, on random Chinese, Japanese, Thai and mixed text.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <random>
#include <string>
#include <vector>

#include "catalog/sqlite/fts_tokenizer.h"
#include "catalog/sqlite/schema.h"
#include "catalog/sqlite/snippet.h"

namespace quarry::catalog {
namespace {

class SnippetTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK);
    api_ = fts5_api_of(db_);
    ASSERT_NE(api_, nullptr);
    register_quarry_tokenizer(api_);
    tokenizer_ = std::make_unique<FtsTokenizer>(
        api_, "porter quarry segmenter " + GetParam() + " diacritics fold");
    ASSERT_TRUE(tokenizer_->ok());
  }
  void TearDown() override {
    tokenizer_.reset();
    sqlite3_close(db_);
  }
  sqlite3* db_ = nullptr;
  fts5_api* api_ = nullptr;
  std::unique_ptr<FtsTokenizer> tokenizer_;
};

const std::vector<std::string> kPieces = {"我们使用向量数据库来存储嵌入",
                                          "。",
                                          "检索时先比较向量的距离",
                                          "，",
                                          "東京の天気は晴れです",
                                          "、",
                                          "明日は雨が降るでしょう",
                                          "！",
                                          "ภาษาไทยเป็นภาษาที่สวยงาม",
                                          " ",
                                          "PostgreSQL",
                                          " ",
                                          "数据库",
                                          "\n",
                                          "ＡＢＣ１２３",
                                          "ｶﾀｶﾅ",
                                          "的",
                                          "（",
                                          "天気",
                                          "）",
                                          "Straße"};
const std::vector<std::string> kQueries = {"数据库",  "向量 距离",         "天気",     "東京 雨",
                                           "ภาษา",    "postgresql 数据库", "abc123",   "カタカナ",
                                           "的 数据", "strasse 天気",      "存储嵌入", "晴れ"};

TEST_P(SnippetTest, SkippingPiecesWithoutTermsChangesNoHighlight) {
  std::mt19937 rng(5);
  int compared = 0, highlighted = 0;
  for (int round = 0; round < 300; ++round) {
    std::string text;
    for (int k = 1 + static_cast<int>(rng() % 30); k > 0; --k)
      text += kPieces[rng() % kPieces.size()];
    const std::string& q = kQueries[rng() % kQueries.size()];
    Snippeter full(*tokenizer_, q, false);
    Snippeter lazy(*tokenizer_, q, true);
    // A window larger than the text: both show all of it, so they must mark the same words.
    const Snippet a = full.make(text, 100000);
    const Snippet b = lazy.make(text, 100000);
    EXPECT_EQ(a.marked, b.marked) << "query " << q << "\ntext " << text;
    EXPECT_EQ(a.highlights, b.highlights) << q;
    // With a small window the cut may differ, but what is shown is marked the same way.
    const Snippet c = lazy.make(text, 12);
    EXPECT_EQ(c.highlights.empty(), a.highlights.empty()) << q << "\n" << text;
    ++compared;
    highlighted += !a.highlights.empty();
  }
  EXPECT_EQ(compared, 300);
  EXPECT_GT(highlighted, 100) << "most rounds must find something, or this shows nothing";
}

INSTANTIATE_TEST_SUITE_P(Segmenters, SnippetTest, ::testing::Values("icu", "bigram"));

}  // namespace
}  // namespace quarry::catalog
