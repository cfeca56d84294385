// Front matter: rendered as valid YAML and read back byte for byte, whatever the filename.
#include <gtest/gtest.h>

#include <algorithm>

#include "convert/converter.h"
#include "core/util.h"

namespace quarry::convert {
namespace {

FrontMatter sample(const std::string& filename, const std::string& title = "T") {
  return FrontMatter{"01HZX3J5Q9V2F7W8R6T4N1M0KA", filename, std::string(64, 'a'), "pdf",
                     "2024-05-01T12:00:00.000Z",   title};
}

TEST(FrontMatter, RendersAQuotedYamlBlockFollowedByABlankLine) {
  std::string out = render_front_matter(sample("report.pdf", "Q1 \"Report\""));
  EXPECT_EQ(out,
            "---\n"
            "id: \"01HZX3J5Q9V2F7W8R6T4N1M0KA\"\n"
            "filename: \"report.pdf\"\n"
            "source_sha256: \"" +
                std::string(64, 'a') +
                "\"\n"
                "converter: \"pdf\"\n"
                "ingested_at: \"2024-05-01T12:00:00.000Z\"\n"
                "title: \"Q1 \\\"Report\\\"\"\n"
                "---\n\n");
}

TEST(FrontMatter, NastyFilenamesAndTitlesRoundTrip) {
  const std::vector<std::string> nasty = {
      "plain.md",
      "with \"double\" quotes.txt",
      "back\\slash\\.md",
      "trailing backslash\\",
      "new\nline\r\n.md",
      "---",
      "---\n---\n",
      "key: value: more.md",
      "# not a comment.md",
      "'single' quotes.md",
      "tab\there.csv",
      "  leading and trailing spaces  ",
      "Gr\xC3\xBC\xC3\x9F"
      "e \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x93\x84.pdf",
      std::string("nul\0byte", 8),
      "ctrl\x01\x1F\x7F.md",
      "c1 \xC2\x85 nel \xC2\x9F",
      "line sep \xE2\x80\xA8 para sep \xE2\x80\xA9",
      "bom \xEF\xBB\xBF inside",
      "\\x41 \\u0041 \\n literal escapes",
      "{ [ & * ! | > % @ ` ,",
      "",
  };
  for (const std::string& name : nasty) {
    FrontMatter fm = sample(name, name);
    std::string file = render_front_matter(fm) + "# Body\n";
    ParsedFile parsed = parse_front_matter(file);
    EXPECT_EQ(parsed.front.filename, name);
    EXPECT_EQ(parsed.front.title, name);
    EXPECT_EQ(parsed.front.id, fm.id);
    EXPECT_EQ(parsed.front.source_sha256, fm.source_sha256);
    EXPECT_EQ(parsed.front.converter, "pdf");
    EXPECT_EQ(parsed.front.ingested_at, fm.ingested_at);
    EXPECT_EQ(file.substr(parsed.body_offset), "# Body\n") << "filename: " << name;
    // The block is one line per key: nothing in a value may start a new line.
    std::string block = file.substr(0, parsed.body_offset);
    EXPECT_EQ(std::count(block.begin(), block.end(), '\n'), 9) << block;
    EXPECT_TRUE(core::is_valid_utf8(block));
  }
}

TEST(FrontMatter, InvalidUtf8IsReplacedSoTheBlockStaysValidYaml) {
  std::string file = render_front_matter(sample("bad\xFF\xFEname.md"));
  EXPECT_TRUE(core::is_valid_utf8(file));
  EXPECT_EQ(parse_front_matter(file).front.filename, "bad\xEF\xBF\xBD\xEF\xBF\xBDname.md");
}

TEST(FrontMatter, BodyOffsetIsTheByteAfterTheBlankLine) {
  std::string fm = render_front_matter(sample("a.md"));
  std::string file = fm + "---\nbody starting with a rule\n";
  ParsedFile parsed = parse_front_matter(file);
  EXPECT_EQ(parsed.body_offset, fm.size());
  EXPECT_EQ(file.substr(parsed.body_offset, 4), "---\n");
}

TEST(FrontMatter, BodyOffsetWithoutTheBlankLineOrBody) {
  std::string file = "---\nid: \"x\"\n---\nbody\n";
  EXPECT_EQ(parse_front_matter(file).body_offset, file.find("body"));
  const std::string no_newline = "---\nid: \"x\"\n---";
  EXPECT_EQ(parse_front_matter(no_newline).body_offset, no_newline.size());
  EXPECT_EQ(parse_front_matter("---\nid: \"x\"\n---").front.id, "x");
}

TEST(FrontMatter, FileWithoutFrontMatterHasBodyOffsetZero) {
  EXPECT_EQ(parse_front_matter("# Just markdown\n").body_offset, 0u);
  EXPECT_EQ(parse_front_matter("").body_offset, 0u);
  // A thematic break and a paragraph are not front matter.
  ParsedFile p = parse_front_matter("---\nSome text, not a key\n---\n\nmore\n");
  EXPECT_EQ(p.body_offset, 0u);
  EXPECT_EQ(p.front.id, "");
  // An unclosed block is not front matter either.
  EXPECT_EQ(parse_front_matter("---\nid: \"x\"\n# Heading\n").body_offset, 0u);
}

TEST(FrontMatter, ReadsHandEditedPlainAndSingleQuotedValues) {
  ParsedFile p = parse_front_matter(
      "---\nid: 01ABC\ntitle: 'It''s here'\nfilename:   notes.md  \nextra: ignored\n"
      "# a comment\n---\n\nbody");
  EXPECT_EQ(p.front.id, "01ABC");
  EXPECT_EQ(p.front.title, "It's here");
  EXPECT_EQ(p.front.filename, "notes.md");
  EXPECT_EQ(std::string("---\nid: 01ABC\ntitle: 'It''s here'\nfilename:   notes.md  \n"
                        "extra: ignored\n# a comment\n---\n\nbody")
                .substr(p.body_offset),
            "body");
}

TEST(FrontMatter, DecodesYamlEscapesItDoesNotWriteItself) {
  ParsedFile p = parse_front_matter("---\ntitle: \"\\u00e9\\x41\\U0001F600\\/\\q\"\n---\n");
  EXPECT_EQ(p.front.title,
            "\xC3\xA9"
            "A\xF0\x9F\x98\x80/\\q");
}

}  // namespace
}  // namespace quarry::convert
