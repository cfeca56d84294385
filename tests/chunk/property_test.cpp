// Invariants (text == markdown.substr(offset, length), token budgets, order, ids, no text lost)
// over hand-picked awkward documents, a 200 KB document and hundreds of random ones.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chunk/chunker.h"
#include "chunk_checks.h"

namespace quarry::chunk {
namespace {

using test::approx;
using test::check_invariants;
using test::MarkdownGen;
using test::options;

bool holds(const std::string& md, const ChunkOptions& o) {
  std::vector<Chunk> chunks = chunk_markdown(md, o, approx());
  return check_invariants(md, chunks, o);
}

bool holds_for_all_profiles(const std::string& md, int max_tokens, int overlap) {
  bool ok = true;
  for (const char* profile : {"prose", "code", "none"}) {
    SCOPED_TRACE(profile);
    ok = holds(md, options(profile, max_tokens, overlap)) && ok;
  }
  return ok;
}

TEST(ChunkInvariants, HoldOnAwkwardDocuments) {
  const std::vector<std::string> docs = {
      "x",
      "#",
      "# only a heading",
      "#\n\n##\n\ntext under empty headings",
      "---\n\n***\n\n___",
      "```\n```",
      "```\nunclosed fence\n\n# not a heading\n",
      "~~~python\n\n\n  indented()\n\n~~~\n",
      "| a |\n|---|\n| 1 |\n| 2 |",
      "| | |\n|-|-|\n| | x |",
      "![](image.png)\n\n![alt](b.png) caption",
      "> quote\n> > nested\n>\n> # quoted heading",
      "- a\n  - b\n    - c\n\n      code in list\n- d\n\n  para in item",
      "1. one\n2. two\n\n   ```\n   fenced in list\n   ```\n3. three",
      "<div>\nhtml block\n</div>\n\ntext",
      "Setext\n======\nbody\nSecond\n------",
      "    indented code\n    more\n\ntext",
      "word\u00a0word\u3000word\u2009word",
      "text with trailing spaces   \n\n   \n",
      "\t\tleading tabs\n\ttext",
      "a\\\nb  \nc",  // hard breaks
      "&amp; &copy; &#169; entities",
      "[link text](http://example.com/a_long_path?with=query&and=more \"title\")",
      "emoji 👨‍👩‍👧 family 🇫🇷 flag ❤️ heart",
      "中文文本没有空格但是很长" + std::string(300, 'x') + "。下一句。",
      std::string(3000, '-'),
      std::string(2000, '#'),
      std::string("nul\0byte", 8),
      "\xff\xfe invalid \xc3 utf8 \xe4\xb8",
  };
  for (std::size_t i = 0; i < docs.size(); ++i) {
    SCOPED_TRACE("doc " + std::to_string(i));
    EXPECT_TRUE(holds_for_all_profiles(docs[i], 16, 4));
    EXPECT_TRUE(holds_for_all_profiles(docs[i], 512, 64));
  }
}

TEST(ChunkInvariants, HoldOnA200KilobyteDocument) {
  MarkdownGen gen(2024);
  std::string md;
  while (md.size() < 200 * 1024) md += gen.document() + "\n\n# Part " + gen.word() + "\n\n";
  for (int max : {16, 128, 512, 2048}) {
    SCOPED_TRACE(max);
    ChunkOptions o = options("prose", max, std::min(64, max / 8));
    o.max_chunks = 200000;
    std::vector<Chunk> chunks = chunk_markdown(md, o, approx());
    EXPECT_TRUE(check_invariants(md, chunks, o));
    EXPECT_GT(chunks.size(), 10u);
    o.profile = "code";
    EXPECT_TRUE(holds(md, o));
  }
}

TEST(ChunkInvariants, HoldOnHundredsOfRandomDocuments) {
  MarkdownGen gen(12345);
  int checked = 0;
  for (int round = 0; round < 400; ++round) {
    std::string md = gen.document();
    if (approx().count(md) == 0) continue;
    int max = 16 + gen.pick(300);
    int overlap = gen.pick(max / 2 + 1);
    const char* profile = round % 5 == 0 ? "code" : round % 11 == 0 ? "none" : "prose";
    ChunkOptions o = options(profile, max, overlap);
    o.max_chunks = 100000;
    SCOPED_TRACE("round " + std::to_string(round) + " " + profile + " max " + std::to_string(max) +
                 " overlap " + std::to_string(overlap) + "\n" + md);
    std::vector<Chunk> chunks = chunk_markdown(md, o, approx());
    ASSERT_TRUE(check_invariants(md, chunks, o));
    ++checked;
  }
  EXPECT_GT(checked, 350);
}

// The same under chunking.segmenter icu (windows end between ICU's words; approx-wordpiece-v2),
// with unspaced Thai and Chinese mixed in.
TEST(ChunkInvariants, HoldUnderTheIcuSegmenter) {
  MarkdownGen gen(777);
  const auto v2 = make_approx_tokenizer(true);
  const char* unspaced[] = {"ภาษาไทยเป็นภาษาที่สวยงาม", "我们使用向量数据库来存储嵌入",
                            "東京の天気は晴れです", "ພາສາລາວ", "ភាសាខ្មែរ"};
  int checked = 0;
  for (int round = 0; round < 200; ++round) {
    std::string md = gen.document();
    for (int k = gen.pick(6); k > 0; --k) md += unspaced[gen.pick(5)];
    if (v2->count(md) == 0) continue;
    int max = 16 + gen.pick(200);
    ChunkOptions o = options(round % 5 == 0 ? "code" : "prose", max, gen.pick(max / 2 + 1));
    o.words = true;
    o.max_chunks = 100000;
    SCOPED_TRACE("round " + std::to_string(round) + "\n" + md);
    ASSERT_TRUE(check_invariants(md, chunk_markdown(md, o, *v2), o, *v2));
    ++checked;
  }
  EXPECT_GT(checked, 150);
}

// Like a model tokenizer that adds [CLS] and [SEP]: a text counts more than its spans, so windows
// cut at max_tokens spans must shrink until their own count fits.
class SpecialTokensTokenizer : public Tokenizer {
 public:
  std::string id() const override { return "approx+cls+sep"; }
  void spans(std::string_view text,
             std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) const override {
    approx().spans(text, out);
  }
  int count(std::string_view text) const override {
    int n = approx().count(text);
    return n == 0 ? 0 : n + 2;
  }
};

TEST(ChunkInvariants, HoldWhenATextCountsMoreThanItsSpans) {
  SpecialTokensTokenizer tok;
  MarkdownGen gen(4242);
  for (int round = 0; round < 150; ++round) {
    std::string md = gen.document();
    if (approx().count(md) == 0) continue;
    int max = 16 + gen.pick(100);
    ChunkOptions o = options(round % 3 == 0 ? "code" : "prose", max, gen.pick(max / 2 + 1));
    o.max_chunks = 100000;
    SCOPED_TRACE("round " + std::to_string(round) + "\n" + md);
    ASSERT_TRUE(check_invariants(md, chunk_markdown(md, o, tok), o, tok));
  }
}

// Windows of one section overlap their neighbour by at most overlap_tokens (less only where a
// code block or table needs the room: then they touch); windows of different sections never
// overlap.
TEST(ChunkInvariants, OverlapOnlyBetweenSiblingWindows) {
  MarkdownGen gen(99);
  int sibling_pairs = 0;
  int overlapping_pairs = 0;
  for (int round = 0; round < 150; ++round) {
    std::string md = gen.document();
    if (approx().count(md) == 0) continue;
    int overlap = 1 + gen.pick(8);
    ChunkOptions o = options("prose", 16 + overlap * 2 + gen.pick(40), overlap);
    std::vector<Chunk> chunks = chunk_markdown(md, o, approx());
    for (std::size_t i = 0; i + 1 < chunks.size(); ++i) {
      const Chunk& a = chunks[i];
      const Chunk& b = chunks[i + 1];
      std::size_t a_end = a.offset + a.length;
      bool siblings = a.parent_chunk && a.parent_chunk == b.parent_chunk;
      if (!siblings) {
        ASSERT_GE(b.offset, a_end) << md;
        continue;
      }
      ++sibling_pairs;
      if (b.offset > a_end) {  // touching: a code block or table needed the whole window
        std::string between = md.substr(a_end, b.offset - a_end);
        ASSERT_EQ(between.find_first_not_of(" \t\n"), std::string::npos) << md;
      }
      if (b.offset < a_end) {
        ++overlapping_pairs;
        EXPECT_LE(approx().count(md.substr(b.offset, a_end - b.offset)), overlap) << md;
      }
    }
  }
  EXPECT_GT(sibling_pairs, 100);
  EXPECT_GE(overlapping_pairs * 10, sibling_pairs * 9);
}

}  // namespace
}  // namespace quarry::chunk
