// chunking.segmenter icu (issue 27): windows of text written without spaces end between ICU's
// dictionary words, and the approximate tokenizer's version 2 counts Thai, Lao, Khmer and Myanmar
// by those words. `none` (every KB made before the setting) cuts and counts as before.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "chunk/chunker.h"
#include "chunk_checks.h"
#include "core/segment.h"

namespace quarry::chunk {
namespace {

using Spans = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

const Tokenizer& v1() {
  return test::approx();
}
const Tokenizer& v2() {
  static const auto t = make_approx_tokenizer(true);
  return *t;
}

Spans spans_of(const Tokenizer& t, std::string_view text) {
  Spans out;
  t.spans(text, out);
  return out;
}

using test::word_boundaries;

int code_points(std::string_view s) {
  return static_cast<int>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

const std::string kThai = "ภาษาไทยเป็นภาษาที่สวยงามและมีประวัติศาสตร์ยาวนาน";

TEST(ApproxTokenizerV2, HasItsOwnId) {
  EXPECT_EQ(v1().id(), "approx-wordpiece-v1");
  EXPECT_EQ(v2().id(), "approx-wordpiece-v2");
}

TEST(ApproxTokenizerV2, CountsThaiByDictionaryWords) {
  const auto words = word_boundaries(kThai);
  ASSERT_GT(words.size(), 6u) << "ICU finds several words in the sentence";
  // Version 1: the whole run is one word of 6, then 4, 4, ... code points.
  const int n = code_points(kThai);
  EXPECT_EQ(v1().count(kThai), 1 + (n - 6 + 3) / 4);
  bool v1_crosses_a_word = false;
  for (auto [b, e] : spans_of(v1(), kThai)) {
    for (std::size_t k = b + 1; k < e; ++k) {
      v1_crosses_a_word |= words.count(k) > 0;
    }
  }
  EXPECT_TRUE(v1_crosses_a_word);
  // Version 2: each of ICU's words counts by rule 3, and no token crosses a word's edge.
  int expected = 0;
  for (auto it = words.begin(); std::next(it) != words.end(); ++it) {
    const int w = code_points(std::string_view(kThai).substr(*it, *std::next(it) - *it));
    expected += w <= 6 ? 1 : 1 + (w - 6 + 3) / 4;
  }
  EXPECT_EQ(v2().count(kThai), expected);
  const Spans sp = spans_of(v2(), kThai);
  ASSERT_FALSE(sp.empty());
  EXPECT_EQ(sp.front().first, 0u);
  EXPECT_EQ(sp.back().second, kThai.size());
  for (std::size_t i = 0; i < sp.size(); ++i) {
    if (i > 0) {
      EXPECT_EQ(sp[i].first, sp[i - 1].second) << "no character left out";
    }
    for (std::size_t k = sp[i].first + 1; k < sp[i].second; ++k) {
      EXPECT_EQ(words.count(k), 0u) << "token " << i << " crosses a word's edge at " << k;
    }
  }
}

TEST(ApproxTokenizerV2, CountsEverythingElseAsVersionOne) {
  for (std::string_view text :
       {"Hello, world! internationalization 3.14", "我们使用向量数据库来存储嵌入。",
        "東京の天気は晴れです", "한국어 텍스트 검색", "café 👍🏽 \xff -- Straße",
        "mixed ภาษาไทย and English"}) {
    Spans a = spans_of(v1(), text);
    Spans b = spans_of(v2(), text);
    if (text.find("ภาษา") == std::string_view::npos) {
      EXPECT_EQ(a, b) << text;
    } else {
      // Only the Thai run differs; the English words around it are the same tokens.
      EXPECT_EQ(a.front(), b.front()) << text;
      EXPECT_EQ(a.back(), b.back()) << text;
    }
  }
}

TEST(ApproxTokenizerV2, SpansAreOrderedAndCoverAllInkOnRandomText) {
  std::mt19937 rng(11);
  const char* alphabet[] = {"a",   " ", "中", "ภา",     "ษา",   "ไทย", "ที่",  "ເລ", "ກ", "ខ្មែរ",
                            "မြန်", "ๆ", "ฯ",  "\u0301", "\xff", ".",   "\n", "9",  "๑"};
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) text += alphabet[rng() % std::size(alphabet)];
    test::check_spans(v2(), text, true);
  }
}

// The window edges of `text` chunked with `words` on or off, and whether each one is a word
// boundary.
std::vector<std::pair<std::size_t, bool>> edges(const std::string& text, bool words,
                                                const Tokenizer& tok) {
  ChunkOptions o = test::options("prose", 24, 4);
  o.words = words;
  const auto chunks = chunk_markdown(text, o, tok);
  EXPECT_GE(chunks.size(), 4u);
  EXPECT_TRUE(test::check_invariants(text, chunks, o, tok));
  const auto at = word_boundaries(text);
  std::vector<std::pair<std::size_t, bool>> out;
  for (const auto& c : chunks) {
    out.emplace_back(c.offset, at.count(c.offset) > 0);
    out.emplace_back(c.offset + c.length, at.count(c.offset + c.length) > 0);
  }
  return out;
}

std::string repeated(const std::string& sentence, int times) {
  std::string s;
  for (int i = 0; i < times; ++i) s += sentence;
  return s;
}

TEST(SegmenterWindows, ChineseWindowsEndBetweenWords) {
  // No sentence ends: without words a window ends wherever its budget runs out.
  const std::string text = repeated("我们使用向量数据库来存储嵌入并且检索相关的文档", 12);
  for (auto [at, is_word] : edges(text, true, v1()))
    EXPECT_TRUE(is_word) << "a window edge at byte " << at << " is inside a word";
  const auto before = edges(text, false, v1());
  EXPECT_TRUE(std::any_of(before.begin(), before.end(), [](auto e) { return !e.second; }))
      << "without the setting some window cuts a word (else this test shows nothing)";
}

TEST(SegmenterWindows, JapaneseAndThaiWindowsEndBetweenWords) {
  const std::string ja = repeated("東京の天気は晴れですが明日は雨が降るでしょう", 12);
  for (auto [at, is_word] : edges(ja, true, v1()))
    EXPECT_TRUE(is_word) << "ja: a window edge at byte " << at << " is inside a word";
  const std::string th = repeated(kThai, 8);
  for (auto [at, is_word] : edges(th, true, v2()))
    EXPECT_TRUE(is_word) << "th: a window edge at byte " << at << " is inside a word";
  const auto before = edges(th, false, v1());
  EXPECT_TRUE(std::any_of(before.begin(), before.end(), [](auto e) { return !e.second; }));
}

TEST(SegmenterWindows, SpacedTextChunksTheSameEitherWay) {
  std::string md = "# Notes\n\n";
  for (int i = 0; i < 40; ++i)
    md += "Sentence number " + std::to_string(i) + " talks about vector databases and search. ";
  ChunkOptions on = test::options("prose", 32, 4);
  on.words = true;
  ChunkOptions off = on;
  off.words = false;
  const auto a = chunk_markdown(md, on, v2());
  const auto b = chunk_markdown(md, off, v1());
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].offset, b[i].offset);
    EXPECT_EQ(a[i].length, b[i].length);
    EXPECT_EQ(a[i].token_count, b[i].token_count);
  }
}

}  // namespace
}  // namespace quarry::chunk
