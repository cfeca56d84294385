// The BERT normaliser, pre-tokenizer and WordPiece on tricky text.
#include <gtest/gtest.h>

#include "embed/static/wordpiece.h"
#include "model_fixture.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace {

using quarry::testing::TempDir;
using quarry::testing::TinyModel;
using Tokens = std::vector<std::string>;

WordPieceTokenizer tokenizer(const TinyModel& m) {
  TempDir dir;
  m.write(dir.path());
  return WordPieceTokenizer::load((dir / "tokenizer.json").string());
}

TEST(WordPiece, LowercasesAndSplitsPunctuation) {
  auto t = tokenizer(TinyModel{});
  EXPECT_EQ(t.tokenize("The CAT,dog!"), (Tokens{"the", "cat", "[UNK]", "dog", "[UNK]"}));
  std::vector<std::int32_t> ids;
  t.encode("cat dog", ids);
  EXPECT_EQ(ids, (std::vector<std::int32_t>{4, 5}));
}

TEST(WordPiece, GreedyLongestMatchWithContinuations) {
  auto t = tokenizer(TinyModel{});
  EXPECT_EQ(t.tokenize("cats unable"), (Tokens{"cat", "##s", "un", "##able"}));
  // An unmatched remainder makes the whole word one [UNK], as in BERT.
  EXPECT_EQ(t.tokenize("catz"), (Tokens{"[UNK]"}));
  EXPECT_EQ(t.count_tokens("cats unable catz"), 5u);
}

TEST(WordPiece, StripsAccentsWhenLowercasing) {
  auto t = tokenizer(TinyModel{});
  EXPECT_EQ(t.tokenize("Café CAFÉ cafe\u0301"), (Tokens{"cafe", "cafe", "cafe"}));
  TinyModel keep;
  keep.normalizer["strip_accents"] = false;
  keep.vocab.push_back("café");
  auto k = tokenizer(keep);
  EXPECT_EQ(k.tokenize("CAFÉ"), (Tokens{"café"}));
}

TEST(WordPiece, CjkCharactersAreSingleTokens) {
  auto t = tokenizer(TinyModel{});
  EXPECT_EQ(t.tokenize("中中cat"), (Tokens{"中", "中", "cat"}));
  EXPECT_EQ(t.tokenize("猫"), (Tokens{"[UNK]"}));
}

TEST(WordPiece, LongWordsAndControlCharacters) {
  TinyModel m;
  m.max_chars = 5;
  auto t = tokenizer(m);
  EXPECT_EQ(t.tokenize("catsss"), (Tokens{"[UNK]"}));           // over max_input_chars_per_word
  EXPECT_EQ(t.tokenize("cat\u200Bs"), (Tokens{"cat", "##s"}));  // zero-width space dropped
  EXPECT_EQ(t.tokenize("cat\x01 dog"), (Tokens{"cat", "dog"}));
  EXPECT_EQ(t.tokenize("the\u00A0car"), (Tokens{"the", "car"}));
  // Invalid UTF-8 never crashes; the bad byte is dropped by clean_text.
  EXPECT_EQ(t.tokenize(std::string("ca\xff"
                                   "t dog")),
            (Tokens{"cat", "dog"}));
}

TEST(WordPiece, UnicodePunctuationSplits) {
  auto t = tokenizer(TinyModel{});
  EXPECT_EQ(t.tokenize("cat\u2014dog\u201Ccar\u201D"),
            (Tokens{"cat", "[UNK]", "dog", "[UNK]", "car", "[UNK]"}));
}

TEST(WordPiece, SpecialTokensAreKnown) {
  auto t = tokenizer(TinyModel{});
  EXPECT_TRUE(t.is_special(0));
  EXPECT_TRUE(t.is_special(t.unk_id()));
  EXPECT_FALSE(t.is_special(4));
  EXPECT_EQ(t.vocab_size(), TinyModel{}.vocab.size());
}

// The chunker cuts windows at token spans in the original text (SPEC §3): one span per token
// encode() gives, in order, never overlapping, each covering the characters its token came from.
TEST(WordPiece, SpansPointAtTheCharactersOfEachToken) {
  auto t = tokenizer(TinyModel{});
  using Spans = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  auto text_of = [](std::string_view s, const Spans& sp) {
    std::vector<std::string> out;
    for (auto [b, e] : sp) out.emplace_back(s.substr(b, e - b));
    return out;
  };
  Spans sp;
  std::string s = "The CATS, unable!";
  t.spans(s, sp);
  EXPECT_EQ(text_of(s, sp), (Tokens{"The", "CAT", "S", ",", "un", "able", "!"}));
  // Accents stripped or written as marks, İ (two characters lowercased), CJK, a word over the
  // vocabulary ([UNK] spans the word), invalid UTF-8 (dropped inside a word).
  s = "Caf\u00e9 cafe\u0301s \u0130 \u4e2d\u4e2dcat catz dog ca\xfft";
  t.spans(s, sp);
  EXPECT_EQ(text_of(s, sp), (Tokens{"Caf\u00e9", "cafe\u0301", "s", "\u0130", "\u4e2d", "\u4e2d",
                                    "cat", "catz", "dog", "ca\xfft"}));
  EXPECT_EQ(sp.size(), t.count_tokens(s));
  std::vector<std::int32_t> ids;
  t.encode(s, ids);
  EXPECT_EQ(sp.size(), ids.size());
  t.spans("", sp);
  EXPECT_TRUE(sp.empty());
  t.spans(" \t\n", sp);
  EXPECT_TRUE(sp.empty());
}

TEST(WordPiece, RejectsNonWordPieceAndBrokenFiles) {
  EXPECT_THROW(WordPieceTokenizer::from_json_text("{not json", "t.json"), Error);
  try {
    WordPieceTokenizer::from_json_text(R"({"model":{"type":"Unigram","vocab":[]}})", "t.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unsupported_format);
  }
  try {
    WordPieceTokenizer::from_json_text(R"({"model":{"type":"WordPiece","vocab":{"a":0}}})",
                                       "t.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::corrupt_input);  // no [UNK] in the vocabulary
    EXPECT_NE(e.message().find("t.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace quarry::embed
