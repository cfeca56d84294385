// Markdown, plain text and source code: pass-through with byte checks.
#include <gtest/gtest.h>

#include "convert_fixtures.h"
#include "core/util.h"

namespace quarry::convert {
namespace {

using testing::code_of;
using testing::convert;
using testing::error_of;

TEST(MarkdownConverter, PassesMarkdownThroughAndTakesTheFirstHeadingAsTitle) {
  ConvertResult r =
      convert("intro line\n\n# The Title\n\nSome *text* with [a link](x.md).\n", "notes.md");
  EXPECT_EQ(r.markdown, "intro line\n\n# The Title\n\nSome *text* with [a link](x.md).\n");
  EXPECT_EQ(r.title, "The Title");
  EXPECT_EQ(r.converter, "markdown");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(MarkdownConverter, CleansWhileConverting) {
  ConvertResult r = convert("\xEF\xBB\xBF# A\r\n\r\n\r\n\r\n#### B   \r\n", "x.markdown");
  EXPECT_EQ(r.markdown, "# A\n\n## B\n");
}

TEST(TextConverter, PassesTextThroughWithFirstShortLineAsTitle) {
  ConvertResult r = convert("\n  Meeting notes  \nline two\n", "notes.txt");
  EXPECT_EQ(r.markdown, "  Meeting notes\nline two\n");
  EXPECT_EQ(r.title, "Meeting notes");
  EXPECT_EQ(r.converter, "text");
}

TEST(TextConverter, LogFilesGetNoTitleFromTheirFirstEntry) {
  EXPECT_EQ(convert("2024-01-01 INFO started\n", "app.log").title, "");
}

TEST(TextConverter, InvalidUtf8IsRepairedWithAWarningNotAnError) {
  ConvertResult r = convert("caf\xE9 au lait\n", "latin1.txt");
  EXPECT_EQ(r.markdown, "caf\xEF\xBF\xBD au lait\n");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("UTF-8"), std::string::npos);
}

TEST(TextConverter, Utf16WithByteOrderMarkIsTranscoded) {
  std::string le("\xFF\xFEh\0i\0 \0\xAC\x20\n\0", 12);  // "hi €\n" little-endian
  ConvertResult r = convert(le, "utf16.txt");
  EXPECT_EQ(r.markdown, "hi \xE2\x82\xAC\n");
  std::string be("\xFE\xFF\0o\0k", 6);
  EXPECT_EQ(convert(be, "utf16be.txt").markdown, "ok\n");
}

TEST(TextConverter, BinaryJunkNamedTxtIsCorruptInput) {
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk += static_cast<char>((i * 7919 + 13) % 256);
  Error e = error_of([&] { convert(junk, "program.txt"); });
  EXPECT_EQ(e.code(), Code::corrupt_input);
  EXPECT_NE(e.message().find("binary"), std::string::npos) << e.message();
}

TEST(TextConverter, ASingleNulByteMakesTheFileBinary) {
  EXPECT_EQ(code_of(std::string("hello\0world", 11), "a.txt"), Code::corrupt_input);
}

TEST(TextConverter, ManyControlCharactersWithoutNulAreBinary) {
  std::string s;
  for (int i = 0; i < 200; ++i) s += "ab\x01\x02\x03";
  EXPECT_EQ(code_of(s, "a.txt"), Code::corrupt_input);
}

TEST(TextConverter, AnsiColouredLogIsText) {
  std::string log;
  for (int i = 0; i < 50; ++i) log += "\x1B[32mINFO\x1B[0m ok\n";
  EXPECT_NE(convert(log, "build.log").markdown.find("[32mINFO[0m ok"), std::string::npos);
}

TEST(TextConverter, MostlyInvalidUtf8IsBinary) {
  std::string s;
  for (int i = 0; i < 1000; ++i) s += "\x80\xC0\xFF\xFE";
  EXPECT_EQ(code_of(s, "a.txt"), Code::corrupt_input);
}

TEST(TextConverter, EmptyAndWhitespaceOnlyFilesHaveNoContent) {
  EXPECT_EQ(code_of("", "a.txt"), Code::no_content);
  EXPECT_EQ(code_of("  \n\t\r\n   ", "a.txt"), Code::no_content);
  EXPECT_EQ(code_of("\n\n", "a.md"), Code::no_content);
  EXPECT_EQ(code_of("   \n", "a.py"), Code::no_content);
}

TEST(CodeConverter, WrapsSourceInAFenceTaggedWithTheLanguage) {
  ConvertResult r = convert("int main() {\n\treturn 0;\n}", "main.cpp");
  EXPECT_EQ(r.markdown, "```cpp\nint main() {\n\treturn 0;\n}\n```\n");
  EXPECT_EQ(r.title, "main.cpp");
  EXPECT_EQ(r.converter, "code");
}

TEST(CodeConverter, MapsExtensionsToLanguageNames) {
  EXPECT_EQ(convert("x = 1\n", "a.py").markdown, "```python\nx = 1\n```\n");
  EXPECT_EQ(convert("a: 1\n", "c.yml").markdown, "```yaml\na: 1\n```\n");
  EXPECT_EQ(convert("{}\n", "d.json").markdown, "```json\n{}\n```\n");
  EXPECT_EQ(convert("fn main() {}\n", "m.rs").markdown, "```rust\nfn main() {}\n```\n");
  EXPECT_EQ(convert("SELECT 1;\n", "q.sql").markdown, "```sql\nSELECT 1;\n```\n");
}

TEST(CodeConverter, HashCommentsStayCodeNotHeadings) {
  ConvertResult r = convert("# one\n#### four\nprint(1)\n", "s.py");
  EXPECT_EQ(r.markdown, "```python\n# one\n#### four\nprint(1)\n```\n");
  EXPECT_EQ(r.title, "s.py");
}

TEST(CodeConverter, FenceIsLongerThanAnyBacktickRunInTheCode) {
  ConvertResult r = convert("s = '''\n```\n````\n'''\n", "t.py");
  EXPECT_EQ(r.markdown, "`````python\ns = '''\n```\n````\n'''\n`````\n");
}

TEST(CodeConverter, BinaryNamedAsCodeIsCorruptInput) {
  EXPECT_EQ(code_of(std::string("\x7F"
                                "ELF\x02\x01\x01\0\0\0",
                                10),
                    "a.c"),
            Code::corrupt_input);
}

}  // namespace
}  // namespace quarry::convert
