// Grep mode (SPEC §4): RE2 semantics over whole Markdown files, with line numbers that match the
// file on disk, context, match ranges, a bound on matches and a deterministic order.
#include "search/grep.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quarry/error.h"
#include "test_util.h"

namespace quarry::search {
namespace {

using quarry::testing::TempDir;
using quarry::testing::write_file;
using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

class GrepTest : public ::testing::Test {
 protected:
  // Writes `content` as <name>.md and returns the GrepFile that points at it.
  GrepFile add(const std::string& name, const std::string& content) {
    const auto path = dir_ / (name + ".md");
    write_file(path, content);
    return GrepFile{name, name + ".pdf", path.string()};
  }

  static GrepOptions opts(const std::string& pattern) {
    GrepOptions o;
    o.pattern = pattern;
    return o;
  }

  static std::vector<int> lines(const GrepResult& r) {
    std::vector<int> out;
    for (const auto& m : r.matches) out.push_back(m.line);
    return out;
  }

  TempDir dir_;
};

TEST_F(GrepTest, LiteralModeTreatsMetacharactersAsText) {
  const auto f = add("a", "abc\na.c\n");
  auto o = opts("a.c");
  EXPECT_EQ(lines(grep_files({f}, o)), (std::vector<int>{1, 2}));  // regex: '.' is any char
  o.literal = true;
  const auto r = grep_files({f}, o);
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].line, 2);
  EXPECT_EQ(r.matches[0].text, "a.c");
  EXPECT_EQ(r.matches[0].doc_id, "a");
  EXPECT_EQ(r.matches[0].filename, "a.pdf");
}

TEST_F(GrepTest, LiteralModeWithMetacharactersAndIgnoreCase) {
  const auto f = add("a", "x (A+B) y\nx (a+b) y\nx ab y\n");
  auto o = opts("(a+b)");
  o.literal = true;
  o.ignore_case = true;
  EXPECT_EQ(lines(grep_files({f}, o)), (std::vector<int>{1, 2}));
}

TEST_F(GrepTest, IgnoreCaseMatchesEveryCasing) {
  const auto f = add("a", "Protein\nPROTEIN levels\nprot ein\nproteins\n");
  auto o = opts("protein");
  EXPECT_EQ(lines(grep_files({f}, o)), (std::vector<int>{4}));
  o.ignore_case = true;
  const auto r = grep_files({f}, o);
  EXPECT_EQ(lines(r), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(r.matches[1].ranges, (Ranges{{0, 7}}));
}

// -w: whole words only, on the regex and the literal paths (the literal one leaves memmem).
TEST_F(GrepTest, WordMatchesWholeWordsOnly) {
  const auto f = add("a", "alpha\nalphabet\nthe alpha.\nalpha_beta\nalpha-beta\n");
  auto o = opts("alpha");
  EXPECT_EQ(lines(grep_files({f}, o)), (std::vector<int>{1, 2, 3, 4, 5}));
  o.word = true;
  const auto r = grep_files({f}, o);
  EXPECT_EQ(lines(r), (std::vector<int>{1, 3, 5}));  // '_' is a word character, '-' is not
  EXPECT_EQ(r.matches[1].ranges, (Ranges{{4, 9}}));
  o.pattern = "a.b";
  o.literal = true;
  const auto f2 = add("b", "a.b\nxa.b\n(a.b)\n");
  EXPECT_EQ(lines(grep_files({f2}, o)), (std::vector<int>{1, 3}));
  o.literal = false;
  o.pattern = "alp|bet";  // the alternation stays inside the boundaries
  EXPECT_EQ(lines(grep_files({f}, o)), (std::vector<int>{}));
}

// -v: the lines without a match, numbered as in the file, with context; front matter skipped.
TEST_F(GrepTest, InvertAnswersTheLinesWithoutAMatch) {
  const auto f = add("a", "---\ntitle: x\n---\nkeep\ndrop me\nkeep too\n");
  auto o = opts("drop");
  o.invert = true;
  auto r = grep_files({f}, o);
  EXPECT_EQ(lines(r), (std::vector<int>{4, 6}));
  EXPECT_EQ(r.matches[0].text, "keep");
  EXPECT_TRUE(r.matches[0].ranges.empty());
  o.after_context = 1;
  r = grep_files({f}, o);
  ASSERT_EQ(r.matches[0].after.size(), 1u);
  EXPECT_EQ(r.matches[0].after[0].text, "drop me");
  o.after_context = 0;
  o.max_matches = 1;
  r = grep_files({f}, o);
  EXPECT_EQ(lines(r), (std::vector<int>{4}));
  EXPECT_TRUE(r.truncated);
  o.max_matches = 1000;
  o.pattern = ".";  // every line has a character: nothing is left
  EXPECT_TRUE(grep_files({f}, o).matches.empty());
}

TEST_F(GrepTest, LineNumbersCountFrontMatterLines) {
  const auto f =
      add("a", "---\nid: \"x\"\ntitle: needle\n---\n\n# Title\n\nfirst needle\nnone\nneedle\n");
  const auto r = grep_files({f}, opts("needle"));
  // Lines 8 and 10 of the file on disk; the front-matter "needle" (line 3) is not content.
  EXPECT_EQ(lines(r), (std::vector<int>{8, 10}));
  EXPECT_EQ(r.matches[0].text, "first needle");
  EXPECT_EQ(r.matches[0].ranges, (Ranges{{6, 12}}));
}

TEST_F(GrepTest, FrontMatterIsSearchedWhenNotSkipped) {
  const auto f = add("a", "---\ntitle: needle\n---\nneedle\n");
  auto o = opts("needle");
  EXPECT_EQ(lines(grep_files({f}, o)), (std::vector<int>{4}));
  o.skip_front_matter = false;
  EXPECT_EQ(lines(grep_files({f}, o)), (std::vector<int>{2, 4}));
}

TEST_F(GrepTest, LineNumbersWithoutFrontMatter) {
  const auto f = add("a", "one\n---\ntwo needle\n---\nthree needle\n");
  // "---" lines that do not open the file are ordinary text.
  EXPECT_EQ(lines(grep_files({f}, opts("needle"))), (std::vector<int>{3, 5}));
  EXPECT_EQ(lines(grep_files({f}, opts("^---$"))), (std::vector<int>{2, 4}));
}

TEST_F(GrepTest, UnclosedFrontMatterIsOrdinaryText) {
  const auto f = add("a", "---\ntitle: needle\nno closing line\n");
  EXPECT_EQ(lines(grep_files({f}, opts("needle"))), (std::vector<int>{2}));
}

TEST_F(GrepTest, AnchorsMatchAtLineBoundaries) {
  const auto f = add("a", "---\nk: v\n---\nab\nba\nab ab\n");
  EXPECT_EQ(lines(grep_files({f}, opts("^ab"))), (std::vector<int>{4, 6}));
  EXPECT_EQ(lines(grep_files({f}, opts("ab$"))), (std::vector<int>{4, 6}));
  // Both words of "ab ab" are whole words: the search from mid-line still sees the space.
  const auto r = grep_files({f}, opts("\\bab\\b"));
  ASSERT_EQ(r.matches.size(), 2u);
  EXPECT_EQ(r.matches[1].ranges, (Ranges{{0, 2}, {3, 5}}));
}

TEST_F(GrepTest, MatchesNeverSpanLines) {
  const auto f = add("a", "foo\nbar\nfoo bar\n");
  EXPECT_EQ(lines(grep_files({f}, opts("foo\\sbar"))), (std::vector<int>{3}));
  EXPECT_EQ(lines(grep_files({f}, opts("foo[^x]bar"))), (std::vector<int>{3}));
  EXPECT_TRUE(grep_files({f}, opts("foo\\nbar")).matches.empty());
  auto lit = opts("foo\nbar");
  lit.literal = true;
  EXPECT_TRUE(grep_files({f}, lit).matches.empty());
  lit.ignore_case = true;
  EXPECT_TRUE(grep_files({f}, lit).matches.empty());
}

TEST_F(GrepTest, ContextLinesStopAtFileStartAndEnd) {
  const auto f = add("a", "---\nk: v\n---\nl4 hit\nl5\nl6\nl7 hit\n");
  auto o = opts("hit");
  o.before_context = 2;
  o.after_context = 2;
  const auto r = grep_files({f}, o);
  ASSERT_EQ(r.matches.size(), 2u);
  EXPECT_TRUE(r.matches[0].before.empty());  // front matter is not context
  ASSERT_EQ(r.matches[0].after.size(), 2u);
  EXPECT_EQ(r.matches[0].after[0].line, 5);
  EXPECT_EQ(r.matches[0].after[1].text, "l6");
  ASSERT_EQ(r.matches[1].before.size(), 2u);
  EXPECT_EQ(r.matches[1].before[0].line, 5);
  EXPECT_EQ(r.matches[1].before[0].text, "l5");
  EXPECT_EQ(r.matches[1].before[1].line, 6);
  EXPECT_TRUE(r.matches[1].after.empty());  // no line after the final newline
}

TEST_F(GrepTest, OverlappingContextIsRepeatedPerMatch) {
  const auto f = add("a", "x\nhit1\nhit2\ny\n");
  auto o = opts("hit");
  o.before_context = 1;
  o.after_context = 1;
  const auto r = grep_files({f}, o);
  ASSERT_EQ(r.matches.size(), 2u);
  EXPECT_EQ(r.matches[0].before[0].text, "x");
  EXPECT_EQ(r.matches[0].after[0].text, "hit2");
  EXPECT_EQ(r.matches[1].before[0].text, "hit1");
  EXPECT_EQ(r.matches[1].after[0].text, "y");
}

TEST_F(GrepTest, ContextAtStartWithoutFrontMatterAndBlankLines) {
  const auto f = add("a", "hit\n\nlast");
  auto o = opts("hit|last");
  o.before_context = 3;
  o.after_context = 3;
  const auto r = grep_files({f}, o);
  ASSERT_EQ(r.matches.size(), 2u);
  EXPECT_TRUE(r.matches[0].before.empty());
  ASSERT_EQ(r.matches[0].after.size(), 2u);
  EXPECT_EQ(r.matches[0].after[0].text, "");
  EXPECT_EQ(r.matches[0].after[1].text, "last");
  ASSERT_EQ(r.matches[1].before.size(), 2u);
  EXPECT_EQ(r.matches[1].before[0].line, 1);
  EXPECT_EQ(r.matches[1].line, 3);
}

TEST_F(GrepTest, AllMatchRangesOnALine) {
  const auto f = add("a", "cat concat cats\n");
  const auto r = grep_files({f}, opts("cat"));
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].ranges, (Ranges{{0, 3}, {7, 10}, {11, 14}}));
  const auto rx = grep_files({f}, opts("c[a-z]*t"));
  EXPECT_EQ(rx.matches[0].ranges, (Ranges{{0, 3}, {4, 10}, {11, 14}}));
}

TEST_F(GrepTest, RangesAreBytesInUtf8Text) {
  const auto f = add("a", "größe Größe\n");
  auto o = opts("GRÖSSE|größe");
  o.ignore_case = true;
  const auto r = grep_files({f}, o);
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].ranges, (Ranges{{0, 7}, {8, 15}}));
}

TEST_F(GrepTest, EmptyMatchesTerminateAndMatchEveryLine) {
  const auto f = add("a", "b\naab\n\nxa\n");
  const auto r = grep_files({f}, opts("a*"));
  EXPECT_EQ(lines(r), (std::vector<int>{1, 2, 3, 4}));  // like grep: every line has ""
  EXPECT_TRUE(r.matches[0].ranges.empty());             // empty matches are not ranges
  EXPECT_EQ(r.matches[1].ranges, (Ranges{{0, 2}}));
  EXPECT_EQ(r.matches[3].ranges, (Ranges{{1, 2}}));
  EXPECT_EQ(lines(grep_files({f}, opts(""))), (std::vector<int>{1, 2, 3, 4}));
  auto lit = opts("");
  lit.literal = true;
  EXPECT_EQ(lines(grep_files({f}, lit)), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(lines(grep_files({f}, opts("$"))), (std::vector<int>{1, 2, 3, 4}));
}

TEST_F(GrepTest, EmptyFileAndEmptyBodyHaveNoLines) {
  const auto empty = add("e", "");
  const auto only_fm = add("f", "---\nk: v\n---\n");
  EXPECT_TRUE(grep_files({empty, only_fm}, opts("a*")).matches.empty());
}

TEST_F(GrepTest, FileWithoutTrailingNewline) {
  const auto f = add("a", "one\ntwo\nthree needle");
  auto o = opts("needle");
  o.before_context = 1;
  o.after_context = 1;
  const auto r = grep_files({f}, o);
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].line, 3);
  EXPECT_EQ(r.matches[0].text, "three needle");
  EXPECT_EQ(r.matches[0].before[0].text, "two");
  EXPECT_TRUE(r.matches[0].after.empty());
  EXPECT_EQ(lines(grep_files({f}, opts("a*"))), (std::vector<int>{1, 2, 3}));
}

TEST_F(GrepTest, MaxMatchesTruncatesAcrossFiles) {
  const auto a = add("a", "hit\nhit\nno\nhit\n");
  const auto b = add("b", "hit\nhit\n");
  auto o = opts("hit");
  o.max_matches = 4;
  const auto r = grep_files({a, b}, o);
  ASSERT_EQ(r.matches.size(), 4u);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.matches[3].doc_id, "b");
  EXPECT_EQ(r.matches[3].line, 1);
  EXPECT_EQ(r.files_matched, 2u);

  o.max_matches = 3;  // the bound falls exactly at the end of a file, more in the next one
  const auto r3 = grep_files({a, b}, o);
  EXPECT_EQ(r3.matches.size(), 3u);
  EXPECT_TRUE(r3.truncated);
  EXPECT_EQ(r3.files_matched, 1u);
}

TEST_F(GrepTest, NotTruncatedWhenExactlyMaxMatchesExist) {
  const auto a = add("a", "hit\nhit hit\n");
  const auto b = add("b", "nothing\n");
  const auto c = add("c", "hit\n");
  auto o = opts("hit");
  o.max_matches = 3;  // counts lines, not ranges
  const auto r = grep_files({a, b, c}, o);
  EXPECT_EQ(r.matches.size(), 3u);
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.files_searched, 3u);
  EXPECT_EQ(r.files_matched, 2u);
  o.max_matches = 0;
  const auto r0 = grep_files({a, b, c}, o);
  EXPECT_TRUE(r0.matches.empty());
  EXPECT_TRUE(r0.truncated);
}

TEST_F(GrepTest, InvalidPatternIsInvalidArgumentWithRe2Message) {
  try {
    grep_files({}, opts("(abc"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_EQ(e.message(), "invalid pattern: missing ): (abc");  // RE2's text, our prefix gone
    EXPECT_EQ(e.details().at("field"), "pattern");
  }
  try {
    grep_files({}, opts("a**"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("bad repetition operator"), std::string::npos) << e.message();
  }
  auto lit = opts("(abc");
  lit.literal = true;
  EXPECT_NO_THROW(grep_files({}, lit));
}

TEST_F(GrepTest, OversizedPatternIsInvalidArgument) {
  auto o = opts("\\pL{1000}");
  o.max_pattern_memory = 1 << 20;
  try {
    grep_files({}, o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_NE(e.message().find("pattern too large"), std::string::npos) << e.message();
  }
}

TEST_F(GrepTest, VanishedAndUnreadableFilesAreSkipped) {
  const auto a = add("a", "hit\n");
  const GrepFile gone{"gone", "gone.pdf", (dir_ / "gone.md").string()};
  const GrepFile folder{"dir", "dir.pdf", dir_.path().string()};
  const auto c = add("c", "x\nhit\n");
  const auto r = grep_files({a, gone, folder, c}, opts("hit"), 2);
  ASSERT_EQ(r.matches.size(), 2u);
  EXPECT_EQ(r.matches[1].doc_id, "c");
  EXPECT_EQ(r.matches[1].line, 2);
  EXPECT_EQ(r.files_searched, 2u);
  EXPECT_EQ(r.files_skipped, 2u);
}

TEST_F(GrepTest, PathologicalPatternRunsInLinearTime) {
  const std::string run(200000, 'a');
  const auto f = add("a", "x\n" + run + "\n" + run + "b\n");
  const auto r = grep_files({f}, opts("(a*)*b"));
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].line, 3);
  EXPECT_EQ(r.matches[0].ranges, (Ranges{{0, run.size() + 1}}));
  // Every 'a' is its own match, each found only after ruling out a*b to the end of the line: the
  // range scan is bounded, the line still matches.
  const auto q = grep_files({f}, opts("a*b|a"));
  ASSERT_EQ(q.matches.size(), 2u);
  EXPECT_EQ(q.matches[0].line, 2);
  EXPECT_FALSE(q.matches[0].ranges.empty());
  EXPECT_EQ(q.matches[0].ranges[0], (std::pair<std::size_t, std::size_t>{0, 1}));
}

TEST_F(GrepTest, LongFileLargerThanTheReadBuffer) {
  std::string big = "---\nk: v\n---\n";
  for (int i = 0; i < 40000; ++i) big += "line " + std::to_string(i) + " filler text\n";
  big += "needle at the end\n";
  const auto f = add("a", big);
  const auto r = grep_files({f}, opts("needle"));
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].line, 40004);
}

TEST_F(GrepTest, ParallelResultEqualsSequential) {
  std::vector<GrepFile> files;
  for (int i = 0; i < 200; ++i) {
    std::string body = "---\nid: \"" + std::to_string(i) + "\"\n---\n";
    for (int l = 0; l < 30; ++l) {
      const bool hit = (i * 31 + l * 7) % 11 == 0;
      body += "doc " + std::to_string(i) + " line " + std::to_string(l) +
              (hit ? " cell death here\n" : " nothing\n");
    }
    files.push_back(add("f" + std::to_string(i), body));
  }
  auto o = opts("cell[s]? (death|growth)");
  o.before_context = 1;
  o.max_matches = 100000;
  const auto one = grep_files(files, o, 1);
  ASSERT_GT(one.matches.size(), 400u);
  EXPECT_FALSE(one.truncated);
  EXPECT_EQ(one.files_searched, 200u);
  for (int threads : {2, 3, 8}) {
    const auto many = grep_files(files, o, threads);
    ASSERT_EQ(many.matches.size(), one.matches.size()) << threads;
    for (std::size_t i = 0; i < one.matches.size(); ++i) {
      ASSERT_EQ(many.matches[i].doc_id, one.matches[i].doc_id) << i;
      ASSERT_EQ(many.matches[i].line, one.matches[i].line) << i;
      ASSERT_EQ(many.matches[i].text, one.matches[i].text) << i;
      ASSERT_EQ(many.matches[i].before.size(), one.matches[i].before.size()) << i;
    }
    EXPECT_EQ(many.files_matched, one.files_matched);
  }
  // With a bound, every thread count returns the same prefix and the same counters.
  o.max_matches = 137;
  const auto bounded_one = grep_files(files, o, 1);
  EXPECT_TRUE(bounded_one.truncated);
  ASSERT_EQ(bounded_one.matches.size(), 137u);
  for (int threads : {2, 8}) {
    const auto bounded = grep_files(files, o, threads);
    ASSERT_EQ(bounded.matches.size(), 137u);
    EXPECT_TRUE(bounded.truncated);
    EXPECT_EQ(bounded.files_searched, bounded_one.files_searched);
    EXPECT_EQ(bounded.files_matched, bounded_one.files_matched);
    EXPECT_EQ(bounded.matches.back().doc_id, bounded_one.matches.back().doc_id);
    EXPECT_EQ(bounded.matches.back().line, bounded_one.matches.back().line);
  }
}

}  // namespace
}  // namespace quarry::search
