// Block offsets recovered from md4c, and the line scanner for source code.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "chunk/outline.h"

namespace quarry::chunk {
namespace {

std::vector<std::uint32_t> offsets_at(const std::vector<Mark>& marks, Level level) {
  std::vector<std::uint32_t> out;
  for (const Mark& m : marks)
    if (m.level == level) out.push_back(m.offset);
  return out;
}

TEST(MarkdownOutline, TopLevelBlocksStartAtTheirLines) {
  std::string md =
      "# H\n\npara one\nstill one\n\n- a\n- b\n\n```\ncode\n```\n\n| x |\n|---|\n| 1 |\n";
  MarkdownOutline o = outline_markdown(md);
  // "# H", "para", "- a", the fence line (not "code"), the table.
  EXPECT_EQ(offsets_at(o.marks, kTopBlock), (std::vector<std::uint32_t>{0, 5, 25, 34, 48}));
  // The second item and the table rows below the header are nested blocks.
  std::vector<std::uint32_t> inner = offsets_at(o.marks, kInnerBlock);
  EXPECT_NE(std::find(inner.begin(), inner.end(), 29u), inner.end());  // "- b"
  EXPECT_NE(std::find(inner.begin(), inner.end(), 60u), inner.end());  // "| 1 |"
}

TEST(MarkdownOutline, VerbatimRangesCoverFencesAndTables) {
  std::string md = "text\n\n~~~py\nx = 1\n\ny = 2\n~~~\n\n| a |\n|---|\n| 1 |\n\nafter\n";
  MarkdownOutline o = outline_markdown(md);
  ASSERT_EQ(o.verbatim.size(), 2u);
  EXPECT_EQ(md.substr(o.verbatim[0].begin, o.verbatim[0].end - o.verbatim[0].begin),
            "~~~py\nx = 1\n\ny = 2\n~~~");
  EXPECT_EQ(md.substr(o.verbatim[1].begin, o.verbatim[1].end - o.verbatim[1].begin),
            "| a |\n|---|\n| 1 |");
}

TEST(MarkdownOutline, FenceWithoutInfoStringStartsOnItsFenceLine) {
  std::string md = "para\n\n```\n\n\ncode after blank lines\n```\n";
  MarkdownOutline o = outline_markdown(md);
  ASSERT_EQ(o.verbatim.size(), 1u);
  EXPECT_EQ(o.verbatim[0].begin, 6u);
  EXPECT_EQ(offsets_at(o.marks, kTopBlock), (std::vector<std::uint32_t>{0, 6}));
}

TEST(MarkdownOutline, FencedBlockInAListItemAnchorsTheItem) {
  std::string md = "- ```\n  code\n  ```\n- next\n";
  MarkdownOutline o = outline_markdown(md);
  EXPECT_EQ(offsets_at(o.marks, kTopBlock), (std::vector<std::uint32_t>{0}));
}

TEST(MarkdownOutline, HeadingsCarryLevelTextAndOffset) {
  std::string md = "intro\n\n## Two  *words*\n\ntext\n\nSet\next\n---\n\n> # not top\n";
  MarkdownOutline o = outline_markdown(md);
  ASSERT_EQ(o.headings.size(), 2u);
  EXPECT_EQ(o.headings[0].offset, 7u);
  EXPECT_EQ(o.headings[0].level, 2);
  EXPECT_EQ(o.headings[0].text, "Two words");
  EXPECT_EQ(o.headings[1].level, 2);
  EXPECT_EQ(o.headings[1].text, "Set ext");
}

TEST(MarkdownOutline, ImageOnlyParagraphStillGetsAMark) {
  std::string md = "para\n\n![](pic.png)\n";
  MarkdownOutline o = outline_markdown(md);
  EXPECT_EQ(offsets_at(o.marks, kTopBlock), (std::vector<std::uint32_t>{0, 6}));
}

TEST(CodeOutline, MarksDefinitionsWithTheirCommentsAndBlankLines) {
  std::string src =
      "import os\n"         // 0
      "\n"                  // 10
      "# Adds.\n"           // 11
      "@decorator\n"        // 19
      "def add(a, b):\n"    // 30
      "    return a + b\n"  // 45
      "\n"                  // 62
      "x = 1\n"             // 63
      "class K:\n"          // 69
      "    pass\n";
  std::vector<Mark> marks = outline_code(src);
  EXPECT_EQ(offsets_at(marks, kTopBlock), (std::vector<std::uint32_t>{11, 69}));
  EXPECT_EQ(offsets_at(marks, kInnerBlock), (std::vector<std::uint32_t>{63}));
}

TEST(CodeOutline, ClosingBraceThenBlankLineEndsADefinition) {
  std::string src = "int f() {\n  return 1;\n}\n\nint g() {\n  if (x) {\n  }\n\n  return 2;\n}\n";
  std::vector<Mark> marks = outline_code(src);
  EXPECT_EQ(offsets_at(marks, kTopBlock), (std::vector<std::uint32_t>{25}));  // "int g"
  // The indented brace is not top level: the blank line after it is only an inner break.
  EXPECT_EQ(offsets_at(marks, kInnerBlock), (std::vector<std::uint32_t>{51}));
}

}  // namespace
}  // namespace quarry::chunk
