// clean_markdown: the invariants every converted document relies on.
#include <gtest/gtest.h>

#include "convert/converter.h"
#include "core/util.h"

namespace quarry::convert {
namespace {

TEST(CleanMarkdown, NormalisesCrLfAndLoneCrToLf) {
  EXPECT_EQ(clean_markdown("a\r\nb\rc\n"), "a\nb\nc\n");
}

TEST(CleanMarkdown, DropsControlCharactersButKeepsTabs) {
  EXPECT_EQ(clean_markdown("a\x01\x02z\tb\x7F\x1B[0m\n"), "az\tb[0m\n");
}

TEST(CleanMarkdown, DropsC1ControlsAndByteOrderMarks) {
  EXPECT_EQ(clean_markdown("\xEF\xBB\xBFhi\xC2\x85there \xC2\xA0x\n"), "hithere \xC2\xA0x\n");
}

TEST(CleanMarkdown, TrimsTrailingWhitespace) {
  EXPECT_EQ(clean_markdown("a  \t\nb \n"), "a\nb\n");
}

TEST(CleanMarkdown, CollapsesRunsOfBlankLinesToOne) {
  EXPECT_EQ(clean_markdown("a\n\n\n\n\nb\n \n\t\nc"), "a\n\nb\n\nc\n");
}

TEST(CleanMarkdown, DropsLeadingAndTrailingBlankLines) {
  EXPECT_EQ(clean_markdown("\n\n  \nbody\n\n\n"), "body\n");
}

TEST(CleanMarkdown, EndsWithExactlyOneNewline) {
  EXPECT_EQ(clean_markdown("x"), "x\n");
  EXPECT_EQ(clean_markdown("x\n\n"), "x\n");
}

TEST(CleanMarkdown, EmptyOrWhitespaceOnlyBecomesEmpty) {
  EXPECT_EQ(clean_markdown(""), "");
  EXPECT_EQ(clean_markdown(" \n\t\r\n\x01\n"), "");
}

TEST(CleanMarkdown, RepairsHeadingJumpsToOneLevelDeeper) {
  EXPECT_EQ(clean_markdown("# A\n\n#### B\n"), "# A\n\n## B\n");
  // Relative structure below a repaired heading is kept: 4 -> 2, so 5 -> 3.
  EXPECT_EQ(clean_markdown("# A\n#### B\n##### C\n### D\n"), "# A\n## B\n### C\n### D\n");
}

TEST(CleanMarkdown, AllowsGoingBackUpAnyNumberOfLevels) {
  EXPECT_EQ(clean_markdown("# A\n## B\n### C\n# D\n## E\n"), "# A\n## B\n### C\n# D\n## E\n");
}

TEST(CleanMarkdown, FirstHeadingKeepsItsLevel) {
  EXPECT_EQ(clean_markdown("## Page 1\n\ntext\n\n## Page 2\n"), "## Page 1\n\ntext\n\n## Page 2\n");
  EXPECT_EQ(clean_markdown("### A\n###### B\n"), "### A\n#### B\n");
}

TEST(CleanMarkdown, IndentedHeadingIsNormalised) {
  EXPECT_EQ(clean_markdown("# A\n   #### B\n"), "# A\n## B\n");
}

TEST(CleanMarkdown, LinesThatAreNotHeadingsAreLeftAlone) {
  const std::string md = "# A\n#hashtag\n####### seven\n    #### indented code\n";
  EXPECT_EQ(clean_markdown(md), md);
}

TEST(CleanMarkdown, DoesNotTouchHashLinesOrBlankRunsInsideFencedCode) {
  const std::string md =
      "# Title\n\n```python\n# comment\n#### not a heading\n\n\n\nx = 1\n```\n\n#### After\n";
  EXPECT_EQ(clean_markdown(md),
            "# Title\n\n```python\n# comment\n#### not a heading\n\n\n\nx = 1\n```\n\n## After\n");
}

TEST(CleanMarkdown, TildeFenceClosesOnlyWithTildesOfAtLeastItsLength) {
  const std::string md = "~~~~\n```\n# inside\n~~~\n# still inside\n~~~~\n# T\n#### U\n";
  EXPECT_EQ(clean_markdown(md), "~~~~\n```\n# inside\n~~~\n# still inside\n~~~~\n# T\n## U\n");
}

TEST(CleanMarkdown, ReplacesInvalidUtf8WithReplacementCharacter) {
  std::string out = clean_markdown("caf\xE9 ok \xF0\x9F\x98\x80 \xC3\n");
  EXPECT_TRUE(core::is_valid_utf8(out));
  EXPECT_NE(out.find("caf\xEF\xBF\xBD ok"), std::string::npos) << out;
  EXPECT_NE(out.find("\xF0\x9F\x98\x80"), std::string::npos) << "valid emoji kept";
}

TEST(CleanMarkdown, IsIdempotent) {
  const std::string md = "\r\n# A\r\n\r\n\r\n#### B  \r\n```\r\n# c\r\n```\r\ntext\x02\r\n";
  std::string once = clean_markdown(md);
  EXPECT_EQ(clean_markdown(once), once);
}

}  // namespace
}  // namespace quarry::convert
