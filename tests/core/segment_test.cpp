// Folding and segmentation of core/segment.h: what the keyword index and the query parser both
// cut text with (issue 27).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/segment.h"

namespace quarry::core {
namespace {
using Span = std::pair<std::size_t, std::size_t>;

std::vector<std::string> words(std::string_view run, Segmenter s) {
  std::vector<std::string> out;
  segment_run(run, s, [&](std::size_t b, std::size_t e) { out.emplace_back(run.substr(b, e - b)); });
  return out;
}

using V = std::vector<std::string>;

TEST(Fold, CaseWidthAndKana) {
  EXPECT_EQ(fold_text("Straße"), "Strasse");  // ASCII is left to the word tokenizer
  EXPECT_EQ(fold_text("STRASSE ß"), "STRASSE ss");
  EXPECT_EQ(fold_text("ＡＢＣ１２３"), "abc123");
  EXPECT_EQ(fold_text("ｶﾀｶﾅ"), "カタカナ");
  EXPECT_EQ(fold_text("ΣΊΣΥΦΟΣ"), fold_text("σίσυφος"));
  EXPECT_EQ(fold_text("plain ascii"), "plain ascii");
  EXPECT_EQ(fold_text("cafe\u0301"), "café");  // a combining mark composes with its letter
}

TEST(Fold, OffsetsPointIntoTheOriginal) {
  const std::string in = "xＡＢＣ y";  // each full-width letter is 3 bytes, folded to 1
  const Folded f = fold(in);
  ASSERT_EQ(f.text, "xabc y");
  EXPECT_EQ(f.original(1, 4), Span(1, 10));
  EXPECT_EQ(f.original(5, 6), Span(11, 12));
  // One character folded to two (ß -> ss): a range ending inside it extends to its end.
  const Folded g = fold("aß");
  ASSERT_EQ(g.text, "ass");
  EXPECT_EQ(g.original(1, 2), Span(1, 3));
}

TEST(Fold, InvalidUtf8BecomesReplacementCharacters) {
  const Folded f = fold(std::string("a\xff") + "b");
  EXPECT_EQ(f.text, "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(f.original(1, 4), Span(1, 2));
}

TEST(ScriptRuns, SplitsUnspacedFromSpaced) {
  const std::string t = "我们用Quarry搜索 vectors";
  std::vector<std::pair<std::string, bool>> runs;
  script_runs(t, [&](std::size_t b, std::size_t e, bool u) { runs.emplace_back(t.substr(b, e - b), u); });
  const std::vector<std::pair<std::string, bool>> want = {
      {"我们用", true}, {"Quarry", false}, {"搜索", true}, {" vectors", false}};
  EXPECT_EQ(runs, want);
}

TEST(ScriptRuns, ThaiMarksStayInTheirRun) {
  const std::string t = "ภาษาไทย";  // vowel signs are marks: one run
  int n = 0;
  script_runs(t, [&](std::size_t, std::size_t, bool u) {
    ++n;
    EXPECT_TRUE(u);
  });
  EXPECT_EQ(n, 1);
}

TEST(Segment, IcuCutsChineseJapaneseAndThaiIntoWords) {
  EXPECT_EQ(words("我们使用向量数据库", Segmenter::icu), (V{"我们", "使用", "向量", "数据", "库"}));
  EXPECT_EQ(words("東京の天気", Segmenter::icu), (V{"東京", "の", "天気"}));
  const auto thai = words("ภาษาไทยง่ายนิดเดียว", Segmenter::icu);
  EXPECT_GE(thai.size(), 3u);
  EXPECT_EQ(thai.front(), "ภาษา");
}

TEST(Segment, BigramsOverlap) {
  EXPECT_EQ(words("向量数据", Segmenter::bigram), (V{"向量", "量数", "数据"}));
  EXPECT_EQ(words("库", Segmenter::bigram), (V{"库"}));
  // Thai keeps ICU's words under bigram too (its letters combine).
  EXPECT_EQ(words("ภาษาไทย", Segmenter::bigram), words("ภาษาไทย", Segmenter::icu));
}

TEST(Segment, SegmenterNames) {
  EXPECT_EQ(segmenter_from_name("bigram"), Segmenter::bigram);
  EXPECT_STREQ(segmenter_name(Segmenter::icu), "icu");
  EXPECT_THROW(segmenter_from_name("mecab"), std::invalid_argument);
}

}  // namespace
}  // namespace quarry::core
