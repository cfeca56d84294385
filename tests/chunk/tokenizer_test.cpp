// The approximate word-piece tokenizer: counts on known strings, spans, UTF-8 handling.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "chunk/chunker.h"
#include "chunk_checks.h"

namespace quarry::chunk {
namespace {

using Spans = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
using test::approx;

Spans spans_of(std::string_view text) {
  Spans out{{99, 99}};  // spans() must replace, not append
  approx().spans(text, out);
  return out;
}

std::vector<std::string> pieces(std::string_view text) {
  std::vector<std::string> out;
  for (auto [b, e] : spans_of(text)) out.emplace_back(text.substr(b, e - b));
  return out;
}

TEST(ApproxTokenizer, HasAStableId) {
  EXPECT_EQ(approx().id(), "approx-wordpiece-v1");
}

TEST(ApproxTokenizer, SplitsWordsAndPunctuation) {
  EXPECT_EQ(pieces("hello world"), (std::vector<std::string>{"hello", "world"}));
  EXPECT_EQ(pieces("Hello, world!"), (std::vector<std::string>{"Hello", ",", "world", "!"}));
  EXPECT_EQ(pieces("don't"), (std::vector<std::string>{"don", "'", "t"}));
  EXPECT_EQ(pieces("3.14"), (std::vector<std::string>{"3", ".", "14"}));
  EXPECT_EQ(pieces("a--b"), (std::vector<std::string>{"a", "-", "-", "b"}));
  EXPECT_EQ(pieces("## Title\n\n| x |"),
            (std::vector<std::string>{"#", "#", "Title", "|", "x", "|"}));
}

TEST(ApproxTokenizer, CountsLongWordsAsSeveralPieces) {
  EXPECT_EQ(approx().count("abcdef"), 1);       // up to 6 characters: whole
  EXPECT_EQ(approx().count("abcdefg"), 2);      // then one piece per 4 characters
  EXPECT_EQ(approx().count("abcdefghij"), 2);   // 6 + 4
  EXPECT_EQ(approx().count("abcdefghijk"), 3);  // 6 + 4 + 1
  EXPECT_EQ(pieces("internationalization"),
            (std::vector<std::string>{"intern", "atio", "nali", "zati", "on"}));
}

TEST(ApproxTokenizer, IgnoresAllKindsOfWhiteSpace) {
  EXPECT_EQ(approx().count(""), 0);
  EXPECT_EQ(approx().count(" \t\r\n\v\f"), 0);
  EXPECT_EQ(approx().count("\u00a0\u3000\u2009\u200b"), 0);  // NBSP, ideographic, thin, ZWSP
  EXPECT_EQ(pieces("a\u00a0b"), (std::vector<std::string>{"a", "b"}));
}

TEST(ApproxTokenizer, TreatsNonAsciiLettersAsLetters) {
  EXPECT_EQ(pieces("café naïve"), (std::vector<std::string>{"café", "naïve"}));
  EXPECT_EQ(pieces("Привет мир"), (std::vector<std::string>{"Привет", "мир"}));
  // 7 characters but 9 bytes: split by characters, never inside a code point.
  EXPECT_EQ(pieces("naïveté"), (std::vector<std::string>{"naïvet", "é"}));
  EXPECT_EQ(pieces("e\u0301t\u00e9"), (std::vector<std::string>{"e\u0301t\u00e9"}));
}

TEST(ApproxTokenizer, CountsEachCjkIdeographAndSymbol) {
  EXPECT_EQ(pieces("中文字"), (std::vector<std::string>{"中", "文", "字"}));
  EXPECT_EQ(pieces("abc中def"), (std::vector<std::string>{"abc", "中", "def"}));
  EXPECT_EQ(pieces("日本。"), (std::vector<std::string>{"日", "本", "。"}));
  EXPECT_EQ(pieces("“quoted”"), (std::vector<std::string>{"“", "quoted", "”"}));
  EXPECT_EQ(pieces("a→b"), (std::vector<std::string>{"a", "→", "b"}));
}

TEST(ApproxTokenizer, KeepsEmojiModifiersWithTheirEmoji) {
  EXPECT_EQ(pieces("👍🏽"), (std::vector<std::string>{"👍🏽"}));
  EXPECT_EQ(pieces("a👍b"), (std::vector<std::string>{"a", "👍", "b"}));
  EXPECT_EQ(pieces("❤\ufe0f!"), (std::vector<std::string>{"❤\ufe0f", "!"}));
}

TEST(ApproxTokenizer, SurvivesInvalidUtf8) {
  EXPECT_EQ(approx().count("\xff\xfe"), 2);
  EXPECT_EQ(pieces("ab\xe4\xb8"), (std::vector<std::string>{"ab", "\xe4", "\xb8"}));
  EXPECT_EQ(approx().count("\xc3"), 1);          // truncated at the end
  EXPECT_EQ(approx().count("\xe4\x41\x42"), 2);  // bad continuation: the lead byte, then "AB"
}

TEST(ApproxTokenizer, CountsControlCharactersSoNoByteIsLost) {
  EXPECT_EQ(pieces(std::string("a\x01"
                               "b",
                               3)),
            (std::vector<std::string>{"a", "\x01", "b"}));
}

// The default Tokenizer::count lists spans: a tokenizer that only implements spans() counts.
class EveryByteTokenizer : public Tokenizer {
 public:
  std::string id() const override { return "bytes"; }
  void spans(std::string_view text, Spans& out) const override {
    out.clear();
    for (std::uint32_t i = 0; i < text.size(); ++i) out.emplace_back(i, i + 1);
  }
};

TEST(TokenizerPort, DefaultCountListsSpans) {
  EveryByteTokenizer t;
  EXPECT_EQ(t.count("hello"), 5);
  EXPECT_EQ(t.count(""), 0);
}

TEST(ApproxTokenizer, SpansAreOrderedNonEmptyAndCoverAllInkOnRandomText) {
  std::mt19937 rng(7);
  const char* alphabet[] = {"a",      "Z",      "9",    " ", "\n", ".",  "é", "中",   "👍",
                            "\u0301", "\u00a0", "\xff", "-", "_",  "\t", "ß", "🏽", "。"};
  for (int round = 0; round < 300; ++round) {
    std::string text;
    int n = static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) text += alphabet[rng() % std::size(alphabet)];
    test::check_spans(approx(), text, false);
  }
}

}  // namespace
}  // namespace quarry::chunk
