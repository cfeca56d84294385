// Globs of directory ingest (SPEC §2.6) on '/'-separated relative paths.
#include <gtest/gtest.h>

#include "ingest/glob.h"

namespace quarry::ingest {
namespace {

TEST(Glob, StarStaysWithinOneSegment) {
  EXPECT_TRUE(glob_match("*.md", "a.md"));
  EXPECT_FALSE(glob_match("*.md", "a.txt"));
  EXPECT_FALSE(glob_match("*.md", "a.md.bak"));
  EXPECT_FALSE(glob_match("notes/*.md", "notes/deep/a.md"));
  EXPECT_TRUE(glob_match("notes/*.md", "notes/a.md"));
  EXPECT_FALSE(glob_match("a*", "a/b"));
}

TEST(Glob, PatternWithoutSlashAlsoMatchesTheLastSegment) {
  EXPECT_TRUE(glob_match("*.md", "docs/x/a.md"));
  EXPECT_TRUE(glob_match("a.md", "deep/er/a.md"));
  EXPECT_FALSE(glob_match("a.md", "deep/a.md/b.txt"));
  EXPECT_FALSE(glob_match("x/*.md", "y/x/a.md"));  // with a slash it is anchored
}

TEST(Glob, DoubleStarSpansSegments) {
  EXPECT_TRUE(glob_match("docs/**/*.md", "docs/a.md"));
  EXPECT_TRUE(glob_match("docs/**/*.md", "docs/x/a.md"));
  EXPECT_TRUE(glob_match("docs/**/*.md", "docs/x/y/z/a.md"));
  EXPECT_FALSE(glob_match("docs/**/*.md", "other/docs/a.md"));
  EXPECT_FALSE(glob_match("docs/**/*.md", "docs/x/a.txt"));
  EXPECT_FALSE(glob_match("docs/**/*.md", "docsx/a.md"));
  EXPECT_TRUE(glob_match("**/x", "x"));
  EXPECT_TRUE(glob_match("**/x", "a/x"));
  EXPECT_TRUE(glob_match("**/x", "a/b/c/x"));
  EXPECT_FALSE(glob_match("**/x", "ax"));
  EXPECT_FALSE(glob_match("**/x", "a/bx"));
  EXPECT_FALSE(glob_match("**/x", "a/x/y"));
  EXPECT_TRUE(glob_match("**", "anything/at/all.md"));
  EXPECT_TRUE(glob_match("build/**", "build/a/b.o"));
  EXPECT_FALSE(glob_match("build/**", "src/build.c"));
  EXPECT_TRUE(glob_match("**/node_modules/**", "web/node_modules/x/index.js"));
  EXPECT_TRUE(glob_match("a/**/b/**/c", "a/x/b/y/z/c"));
  EXPECT_FALSE(glob_match("a/**/b/**/c", "a/x/y/z/c"));
}

TEST(Glob, QuestionMarkIsOneCharacterNotASlash) {
  EXPECT_TRUE(glob_match("?.md", "a.md"));
  EXPECT_FALSE(glob_match("?.md", "ab.md"));
  EXPECT_FALSE(glob_match("?.md", ".md"));
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("a?c", "a/c"));
}

TEST(Glob, CharacterClasses) {
  EXPECT_TRUE(glob_match("[abc].md", "b.md"));
  EXPECT_FALSE(glob_match("[abc].md", "d.md"));
  EXPECT_TRUE(glob_match("[a-c]x", "cx"));
  EXPECT_FALSE(glob_match("[a-c]x", "dx"));
  EXPECT_TRUE(glob_match("[!a]x", "bx"));
  EXPECT_FALSE(glob_match("[!a]x", "ax"));
  EXPECT_TRUE(glob_match("report-[0-9][0-9].txt", "2024/report-07.txt"));
  EXPECT_FALSE(glob_match("report-[0-9][0-9].txt", "report-7.txt"));
}

TEST(Glob, LiteralPaths) {
  EXPECT_TRUE(glob_match("notes/a.md", "notes/a.md"));
  EXPECT_FALSE(glob_match("notes/a.md", "notes/b.md"));
  EXPECT_FALSE(glob_match("notes/a.md", "x/notes/a.md"));
}

}  // namespace
}  // namespace quarry::ingest
