// The prose profile: sections and heading_path, windows of oversize sections (overlap,
// parent_chunk), and the blocks it keeps whole.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chunk/chunker.h"
#include "chunk_checks.h"

namespace quarry::chunk {
namespace {

using test::approx;
using test::check_invariants;
using test::options;
using Path = std::vector<std::string>;

std::vector<Chunk> prose(const std::string& md, int max_tokens = 512, int overlap = 64) {
  ChunkOptions o = options("prose", max_tokens, overlap);
  std::vector<Chunk> chunks = chunk_markdown(md, o, approx());
  EXPECT_TRUE(check_invariants(md, chunks, o));
  return chunks;
}

// Sentences of `words` words each: "Alpha beta ... gamma."
std::string sentences(int count, int words = 10) {
  std::string s;
  for (int i = 0; i < count; ++i) {
    s += "Sentence" + std::to_string(i);
    for (int w = 1; w < words; ++w) s += " word";
    s += ". ";
  }
  s.pop_back();
  return s;
}

TEST(ProseChunking, SplitsAtHeadingsWithBreadcrumbs) {
  std::string md =
      "# Install\n\nIntro text.\n\n## From source\n\nRun make.\n\n### Linux\n\nUse apt.\n\n"
      "## Binary\n\nDownload it.\n\n# Usage\n\nRun it.\n";
  auto chunks = prose(md);
  ASSERT_EQ(chunks.size(), 5u);
  EXPECT_EQ(chunks[0].text, "# Install\n\nIntro text.");
  EXPECT_EQ(chunks[0].heading_path, (Path{"Install"}));
  EXPECT_EQ(chunks[1].heading_path, (Path{"Install", "From source"}));
  EXPECT_EQ(chunks[2].heading_path, (Path{"Install", "From source", "Linux"}));
  EXPECT_EQ(chunks[2].text, "### Linux\n\nUse apt.");
  EXPECT_EQ(chunks[3].heading_path, (Path{"Install", "Binary"}));
  EXPECT_EQ(chunks[4].heading_path, (Path{"Usage"}));
  for (const Chunk& c : chunks) EXPECT_FALSE(c.parent_chunk);
}

TEST(ProseChunking, TextBeforeTheFirstHeadingHasNoBreadcrumbs) {
  auto chunks = prose("Preamble here.\n\n# Title\n\nBody.\n");
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].text, "Preamble here.");
  EXPECT_TRUE(chunks[0].heading_path.empty());
  EXPECT_EQ(chunks[1].heading_path, (Path{"Title"}));
}

TEST(ProseChunking, SectionsAreTrimmedOfUnicodeSpaces) {
  auto chunks = prose("# A\n\ntext\n\u00a0\n\n# B\n\nmore\u3000");
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].text, "# A\n\ntext");
  EXPECT_EQ(chunks[1].text, "# B\n\nmore");
}

TEST(ProseChunking, HeadingWithoutTextAddsNoEmptyBreadcrumb) {
  auto chunks = prose("# Top\n\nintro\n\n## ![](logo.png)\n\nbody\n");
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[1].heading_path, (Path{"Top"}));
  EXPECT_EQ(chunks[1].text, "## ![](logo.png)\n\nbody");
}

TEST(ProseChunking, DoesNotMergeSmallSiblingSections) {
  auto chunks = prose("## A\n\none.\n\n## B\n\ntwo.\n\n## C\n\nthree.\n");
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[1].text, "## B\n\ntwo.");
  EXPECT_EQ(chunks[2].heading_path, (Path{"C"}));
}

TEST(ProseChunking, BareHeadingJoinsTheDeeperSectionBelowIt) {
  auto chunks = prose("# Guide\n## Setup\n### Linux\nUse apt.\n\n## Other\n\nMore.\n");
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].offset, 0u);
  EXPECT_EQ(chunks[0].text, "# Guide\n## Setup\n### Linux\nUse apt.");
  EXPECT_EQ(chunks[0].heading_path, (Path{"Guide", "Setup", "Linux"}));
  EXPECT_EQ(chunks[1].heading_path, (Path{"Guide", "Other"}));
}

TEST(ProseChunking, BareHeadingBeforeASiblingOrAtTheEndStandsAlone) {
  auto chunks = prose("## A\n## B\n\nText.\n\n## C\n");
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].text, "## A");
  EXPECT_EQ(chunks[0].heading_path, (Path{"A"}));
  EXPECT_EQ(chunks[2].text, "## C");
  EXPECT_EQ(chunks[2].heading_path, (Path{"C"}));
}

TEST(ProseChunking, HeadingPathHandlesSkippedLevelsSetextAndInlineMarkup) {
  std::string md =
      "Title *one*\n===========\n\nA.\n\n### Deep `code` & [link](http://x)\n\nB.\n\n"
      "Second\n------\n\nC.\n";
  auto chunks = prose(md);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].heading_path, (Path{"Title one"}));
  EXPECT_EQ(chunks[1].heading_path, (Path{"Title one", "Deep code & link"}));
  EXPECT_EQ(chunks[2].heading_path, (Path{"Title one", "Second"}));
}

TEST(ProseChunking, HeadingsInsideQuotesListsAndCodeDoNotStartSections) {
  std::string md = "# Top\n\n> # quoted\n\n- # listed\n\n```\n# comment\n```\n";
  auto chunks = prose(md);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].heading_path, (Path{"Top"}));
}

TEST(ProseChunking, OversizeSectionBecomesOverlappingSiblingWindows) {
  std::string md = "# Big\n\n" + sentences(60) + "\n\n# Small\n\nTail.\n";
  auto chunks = prose(md, 64, 8);
  ASSERT_GE(chunks.size(), 4u);
  const Chunk& last = chunks.back();
  EXPECT_FALSE(last.parent_chunk);
  EXPECT_EQ(last.heading_path, (Path{"Small"}));
  ASSERT_TRUE(chunks[0].parent_chunk);
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].parent_chunk, chunks[0].parent_chunk);
    EXPECT_EQ(chunks[i].heading_path, (Path{"Big"}));
    EXPECT_LE(chunks[i].token_count, 64);
    EXPECT_GE(chunks[i].token_count, 32) << "windows are packed, not tiny";
  }
  for (std::size_t i = 0; i + 2 < chunks.size(); ++i) {
    std::size_t end = chunks[i].offset + chunks[i].length;
    ASSERT_LT(chunks[i + 1].offset, end) << "siblings overlap";
    int shared = approx().count(md.substr(chunks[i + 1].offset, end - chunks[i + 1].offset));
    EXPECT_GE(shared, 1);
    EXPECT_LE(shared, 8);
  }
}

TEST(ProseChunking, ZeroOverlapWindowsTouchWithoutSharing) {
  auto chunks = prose(sentences(60), 64, 0);
  ASSERT_GE(chunks.size(), 3u);
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i) {
    EXPECT_GE(chunks[i + 1].offset, chunks[i].offset + chunks[i].length);
  }
}

TEST(ProseChunking, EachOversizeSectionGetsItsOwnParent) {
  auto chunks = prose("# A\n\n" + sentences(30) + "\n\n# B\n\n" + sentences(30), 64, 8);
  std::optional<std::string> a = chunks.front().parent_chunk;
  std::optional<std::string> b = chunks.back().parent_chunk;
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
}

TEST(ProseChunking, LongParagraphsSplitAtSentenceEnds) {
  // 12 tokens a sentence: an overlap of 16 reaches back past one sentence start.
  auto chunks = prose(sentences(40), 64, 16);
  ASSERT_GE(chunks.size(), 3u);
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].text.back(), '.') << chunks[i].text;
    EXPECT_EQ(chunks[i + 1].text.substr(0, 8), "Sentence") << "overlap starts a sentence";
  }
}

TEST(ProseChunking, SmallParagraphsPackIntoWindowsThatEndAtParagraphs) {
  std::string md;
  for (int i = 0; i < 40; ++i) md += "Paragraph " + std::to_string(i) + " has six words.\n\n";
  auto chunks = prose(md, 64, 0);
  ASSERT_GE(chunks.size(), 4u);
  for (const Chunk& c : chunks) {
    std::size_t end = c.offset + c.length;
    EXPECT_TRUE(end == md.size() - 2 || md.compare(end, 2, "\n\n") == 0) << c.text;
    // 7 tokens a paragraph: packed up to the budget, not one chunk each.
    if (&c != &chunks.back()) {
      EXPECT_GE(c.token_count, 56);
    }
  }
}

TEST(ProseChunking, KeepsAFittingCodeBlockWhole) {
  std::string code = "```python\n";
  for (int i = 0; i < 12; ++i) code += "value = compute(" + std::to_string(i) + ")\n";
  code += "```";
  std::string md = "# Code\n\n" + sentences(5) + "\n\n" + code + "\n\n" + sentences(5) + "\n";
  ASSERT_LE(approx().count(code), 100);
  auto chunks = prose(md, 120, 16);
  ASSERT_GE(chunks.size(), 2u);
  bool whole = false;
  for (const Chunk& c : chunks) whole |= c.text.find(code) != std::string::npos;
  EXPECT_TRUE(whole) << "some window holds the whole fenced block";
}

TEST(ProseChunking, KeepsAFittingTableWhole) {
  std::string table = "| name | value |\n|------|-------|\n";
  for (int i = 0; i < 10; ++i) table += "| row" + std::to_string(i) + " | some value here |\n";
  table.pop_back();
  std::string md = sentences(8) + "\n\n" + table + "\n\n" + sentences(8);
  auto chunks = prose(md, 100, 12);
  ASSERT_GE(chunks.size(), 2u);
  bool whole = false;
  for (const Chunk& c : chunks) whole |= c.text.find(table) != std::string::npos;
  EXPECT_TRUE(whole);
}

TEST(ProseChunking, OversizeCodeBlockSplitsAtLineEnds) {
  std::string md = "```\n";
  for (int i = 0; i < 80; ++i) md += "call(argument_" + std::to_string(i) + ", x)\n";
  md += "```\n";
  // 9 tokens a line: an overlap of 16 reaches back past one line start.
  auto chunks = prose(md, 64, 16);
  ASSERT_GE(chunks.size(), 3u);
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i) {
    std::size_t end = chunks[i].offset + chunks[i].length;
    EXPECT_EQ(md[end], '\n') << chunks[i].text;
    EXPECT_EQ(md[chunks[i + 1].offset - 1], '\n') << "overlap starts at a line";
  }
}

TEST(ProseChunking, ListsSplitBetweenItems) {
  std::string md;
  for (int i = 0; i < 30; ++i) md += "- item " + std::to_string(i) + " has a few words in it\n";
  auto chunks = prose(md, 48, 6);
  ASSERT_GE(chunks.size(), 3u);
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i) {
    std::size_t end = chunks[i].offset + chunks[i].length;
    EXPECT_EQ(md[end], '\n') << chunks[i].text;
  }
}

TEST(ProseChunking, SplitsASingleGiantWord) {
  std::string md = "# Blob\n\n" + std::string(5000, 'x') + "\n";
  auto chunks = prose(md, 32, 4);
  EXPECT_GE(chunks.size(), 30u);
  for (const Chunk& c : chunks) EXPECT_LE(c.token_count, 32);
}

TEST(ProseChunking, WindowsNeverSplitACodePoint) {
  std::string md;
  for (int i = 0; i < 300; ++i) md += "漢字かな交じり文と emoji 👍🏽 混在。";
  auto chunks = prose(md, 40, 5);
  ASSERT_GE(chunks.size(), 10u);
  for (const Chunk& c : chunks) {
    EXPECT_NE(static_cast<unsigned char>(c.text.front()) & 0xC0, 0x80);
    std::size_t end = c.offset + c.length;
    if (end < md.size()) {
      EXPECT_NE(static_cast<unsigned char>(md[end]) & 0xC0, 0x80);
    }
  }
}

TEST(ProseChunking, MintsFreshIdsOnEveryPass) {
  std::string md = "# A\n\nText.\n";
  auto first = prose(md);
  auto second = prose(md);
  ASSERT_EQ(first.size(), second.size());
  EXPECT_NE(first[0].chunk_id, second[0].chunk_id);
  EXPECT_EQ(first[0].text, second[0].text);
}

}  // namespace
}  // namespace quarry::chunk
