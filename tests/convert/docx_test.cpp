// DOCX via libzip + pugixml: structure, and archives built to hurt (not zips, missing parts,
// bombs that tell the truth about their size and bombs that lie).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>

#include "convert/builtin.h"
#include "convert_fixtures.h"

namespace quarry::convert {
namespace {

using testing::code_of;
using testing::convert;
using testing::docx_entries;
using testing::error_of;
using testing::make_docx;
using testing::make_zip;
using testing::para;

const char* kNumbering =
    "<w:numbering xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">"
    "<w:abstractNum w:abstractNumId=\"0\"><w:lvl w:ilvl=\"0\"><w:numFmt w:val=\"bullet\"/></w:lvl>"
    "<w:lvl w:ilvl=\"1\"><w:numFmt w:val=\"bullet\"/></w:lvl></w:abstractNum>"
    "<w:abstractNum w:abstractNumId=\"1\"><w:lvl w:ilvl=\"0\"><w:numFmt w:val=\"decimal\"/>"
    "</w:lvl></w:abstractNum>"
    "<w:num w:numId=\"1\"><w:abstractNumId w:val=\"0\"/></w:num>"
    "<w:num w:numId=\"2\"><w:abstractNumId w:val=\"1\"/></w:num></w:numbering>";

std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::string xml = "<w:tbl><w:tblPr/>";
  for (const auto& r : rows) {
    xml += "<w:tr>";
    for (const auto& c : r) xml += "<w:tc><w:tcPr/>" + para(c) + "</w:tc>";
    xml += "</w:tr>";
  }
  return xml + "</w:tbl>";
}

TEST(DocxConverter, HeadingsParagraphsListsAndTables) {
  std::string body = para("Project Plan", "Title") + para("Goals", "Heading1") +
                     para("We ship in May.") + para("Scope", "Heading2") +
                     para("first bullet", "", "1") + para("nested bullet", "", "1", 1) +
                     para("second bullet", "", "1") + para("step one", "", "2") +
                     para("step two", "", "2") + table({{"Name", "Owner"}, {"API | v2", "Ada"}}) +
                     para("Closing words.");
  ConvertResult r = convert(make_docx(body, {{"word/numbering.xml", kNumbering}}), "plan.docx");
  EXPECT_EQ(r.converter, "docx");
  EXPECT_EQ(r.title, "Project Plan");
  EXPECT_EQ(r.markdown,
            "# Project Plan\n\n"
            "# Goals\n\n"
            "We ship in May.\n\n"
            "## Scope\n\n"
            "- first bullet\n"
            "    - nested bullet\n"
            "- second bullet\n"
            "1. step one\n"
            "2. step two\n\n"
            "| Name | Owner |\n"
            "| --- | --- |\n"
            "| API \\| v2 | Ada |\n\n"
            "Closing words.\n");
}

TEST(DocxConverter, HeadingLevelsComeFromStyleNamesNotJustIds) {
  const std::string styles =
      "<w:styles xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">"
      "<w:style w:type=\"paragraph\" w:styleId=\"berschrift1\"><w:name w:val=\"heading 1\"/>"
      "</w:style><w:style w:type=\"paragraph\" w:styleId=\"Custom\"><w:name w:val=\"Custom\"/>"
      "<w:pPr><w:outlineLvl w:val=\"1\"/></w:pPr></w:style>"
      "<w:style w:type=\"paragraph\" w:styleId=\"ListBullet\"><w:name w:val=\"List Bullet\"/>"
      "</w:style></w:styles>";
  std::string body =
      para("Einleitung", "berschrift1") + para("Teil", "Custom") + para("Punkt", "ListBullet");
  ConvertResult r = convert(make_docx(body, {{"word/styles.xml", styles}}), "de.docx");
  EXPECT_EQ(r.markdown, "# Einleitung\n\n## Teil\n\n- Punkt\n");
}

TEST(DocxConverter, BoldItalicLinksAndTrackedChanges) {
  const std::string rels =
      "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
      "<Relationship Id=\"rId9\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/"
      "relationships/hyperlink\" Target=\"https://example.com/\" TargetMode=\"External\"/>"
      "</Relationships>";
  std::string body =
      "<w:p><w:r><w:t xml:space=\"preserve\">Plain </w:t></w:r>"
      "<w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">bold </w:t></w:r>"
      "<w:r><w:rPr><w:b/></w:rPr><w:t>run</w:t></w:r>"
      "<w:r><w:rPr><w:b w:val=\"0\"/></w:rPr><w:t xml:space=\"preserve\"> not bold </w:t></w:r>"
      "<w:r><w:rPr><w:i/></w:rPr><w:t>italic</w:t></w:r>"
      "<w:r><w:tab/><w:t xml:space=\"preserve\">see </w:t></w:r>"
      "<w:hyperlink r:id=\"rId9\"><w:r><w:t>the site</w:t></w:r></w:hyperlink>"
      "<w:del><w:r><w:delText>removed</w:delText></w:r></w:del>"
      "<w:ins><w:r><w:t>.</w:t></w:r></w:ins></w:p>";
  ConvertResult r = convert(make_docx(body, {{"word/_rels/document.xml.rels", rels}}), "fmt.docx");
  EXPECT_EQ(r.markdown,
            "Plain **bold run** not bold *italic* see [the site](https://example.com/).\n");
}

TEST(DocxConverter, TitleFromCorePropertiesAndHashParagraphsEscaped) {
  const std::string core =
      "<cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/"
      "core-properties\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>Annual "
      "Review</dc:title></cp:coreProperties>";
  ConvertResult r =
      convert(make_docx(para("# 1 priority"), {{"docProps/core.xml", core}}), "t.docx");
  EXPECT_EQ(r.title, "Annual Review");
  EXPECT_EQ(r.markdown, "\\# 1 priority\n");
}

TEST(DocxConverter, DamagedOptionalPartIsAWarningNotAFailure) {
  ConvertResult r =
      convert(make_docx(para("Body"), {{"word/styles.xml", "<w:styles><oops"}}), "s.docx");
  EXPECT_EQ(r.markdown, "Body\n");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("styles.xml"), std::string::npos);
}

TEST(DocxConverter, NotAZipIsCorruptInput) {
  EXPECT_EQ(code_of("this is plain text, not a zip archive", "fake.docx"), Code::corrupt_input);
  EXPECT_EQ(code_of(std::string("PK\x03\x04garbage", 11), "fake.docx"), Code::corrupt_input);
}

TEST(DocxConverter, ZipWithoutDocumentXmlIsCorruptInput) {
  Error e = error_of([] { convert(make_zip({{"hello.txt", "hi"}}), "x.docx"); });
  EXPECT_EQ(e.code(), Code::corrupt_input);
  EXPECT_NE(e.message().find("word/document.xml"), std::string::npos);
}

TEST(DocxConverter, MalformedDocumentXmlIsCorruptInput) {
  std::string zip = make_zip({{"word/document.xml", "<w:document><w:body><w:p>"}});
  EXPECT_EQ(code_of(zip, "m.docx"), Code::corrupt_input);
  EXPECT_EQ(code_of(make_zip({{"word/document.xml", "<doc/>"}}), "n.docx"), Code::corrupt_input);
}

TEST(DocxConverter, TruncatedArchiveIsCorruptInput) {
  std::string docx = make_docx(para("text"));
  EXPECT_EQ(code_of(docx.substr(0, docx.size() / 2), "t.docx"), Code::corrupt_input);
}

TEST(DocxConverter, EmptyDocumentHasNoContent) {
  EXPECT_EQ(code_of(make_docx(para("   ")), "e.docx"), Code::no_content);
  EXPECT_EQ(code_of("", "e.docx"), Code::no_content);
}

// Content nested past the walk's limit (32 levels of content controls, hyperlinks, tracked
// insertions...) is cut, and the converter says so: alone it is no_content naming the limit
// (it came back as a bare "no text content"), beside text above the limit a warning.
std::string nested_controls(int depth, const std::string& inner) {
  std::string open, close;
  for (int i = 0; i < depth; ++i) {
    open += "<w:sdt><w:sdtContent>";
    close += "</w:sdtContent></w:sdt>";
  }
  return open + inner + close;
}

std::string nested_links(int depth, const std::string& text) {
  std::string open, close;
  for (int i = 0; i < depth; ++i) {
    open += "<w:hyperlink>";
    close += "</w:hyperlink>";
  }
  return "<w:p>" + open + "<w:r><w:t>" + text + "</w:t></w:r>" + close + "</w:p>";
}

TEST(DocxConverter, TextBelowTheNestingLimitIsCutAndSaidSo) {
  for (const std::string& body :
       {nested_controls(20000, para("lost")), nested_links(5000, "lost"),
        "<w:tbl><w:tr><w:tc>" + nested_controls(100, para("lost")) + "</w:tc></w:tr></w:tbl>"}) {
    Error e = error_of([&] { convert(make_docx(body), "deep.docx"); });
    EXPECT_EQ(e.code(), Code::no_content) << e.message();
    EXPECT_NE(e.message().find("nested deeper than 32 levels"), std::string::npos) << e.message();
    EXPECT_EQ(e.details().at("reason"), "nesting_limit");
    EXPECT_EQ(e.details().at("limit"), "32");
  }
  ConvertResult r =
      convert(make_docx(para("kept") + nested_controls(20000, para("lost"))), "deep.docx");
  EXPECT_EQ(r.markdown, "kept\n");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("nested deeper than 32 levels was cut"), std::string::npos)
      << r.warnings[0];
  // Up to the limit nothing is cut.
  ConvertResult ok = convert(make_docx(nested_controls(15, para("shallow"))), "ok.docx");
  EXPECT_EQ(ok.markdown, "shallow\n");
  EXPECT_TRUE(ok.warnings.empty());
}

// A zip source that yields `size` zero bytes without holding them in memory.
struct Zeros {
  zip_uint64_t size;
  zip_uint64_t done = 0;
};

zip_int64_t zeros_callback(void* state, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
  auto* z = static_cast<Zeros*>(state);
  switch (cmd) {
    case ZIP_SOURCE_OPEN:
      z->done = 0;
      return 0;
    case ZIP_SOURCE_READ: {
      zip_uint64_t n = std::min(len, z->size - z->done);
      std::memset(data, 0, n);
      z->done += n;
      return static_cast<zip_int64_t>(n);
    }
    case ZIP_SOURCE_CLOSE:
      return 0;
    case ZIP_SOURCE_STAT: {
      auto* st = static_cast<zip_stat_t*>(data);
      zip_stat_init(st);
      st->size = z->size;
      st->valid |= ZIP_STAT_SIZE;
      return sizeof(zip_stat_t);
    }
    case ZIP_SOURCE_ERROR:
      return 2 * sizeof(int);
    case ZIP_SOURCE_FREE:
      return 0;
    case ZIP_SOURCE_SUPPORTS:
      return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE,
                                            ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
    default:
      return -1;
  }
}

std::string zip_bomb(zip_uint64_t inflated_size) {
  Zeros zeros{inflated_size};
  return make_zip({}, [&](zip_t* z) {
    zip_source_t* src = zip_source_function(z, zeros_callback, &zeros);
    ASSERT_NE(src, nullptr);
    ASSERT_GE(zip_file_add(z, "word/document.xml", src, 0), 0);
  });
}

TEST(DocxConverter, ZipBombIsRefusedFromItsDeclaredSizeWithoutInflating) {
  std::string bomb = zip_bomb(200ull << 20);  // 200 MiB of zeros, ~200 KiB compressed
  ASSERT_LT(bomb.size(), 1u << 20);
  auto start = std::chrono::steady_clock::now();
  Error e = error_of([&] { convert(bomb, "bomb.docx"); });
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(e.code(), Code::payload_too_large) << e.message();
  EXPECT_EQ(e.details().at("check"), "declared_size");
  EXPECT_EQ(e.details().at("entry"), "word/document.xml");
  // Refused before inflating: far quicker than inflating 200 MiB would be.
  EXPECT_LT(elapsed, std::chrono::seconds(2));
}

class LyingZip : public ::testing::Test {
 protected:
  // 4 MiB of zeros read with a 1 MiB cap, after rewriting the sizes the archive declares.
  Error convert_lying(std::uint32_t declared) {
    std::string zip = make_zip({{"word/document.xml", std::string(4u << 20, '\0')}});
    testing::patch_uncompressed_size(zip, "word/document.xml", declared);
    Registry reg;
    reg.add(make_docx_converter(DocxLimits{1u << 20}));
    return error_of([&] { testing::convert(zip, "lying.docx", reg); });
  }
};

TEST_F(LyingZip, ReadingStopsAtTheDeclaredSizeWhenTheDataInflatesFurther) {
  // libzip itself inflates past a lying size; the reader must be the one to stop.
  for (std::uint32_t declared : {1000u, (1u << 20) - 1}) {
    Error e = convert_lying(declared);
    EXPECT_EQ(e.code(), Code::corrupt_input) << declared << ": " << e.message();
    EXPECT_EQ(e.details().count("check") ? e.details().at("check") : "", "size_mismatch");
  }
}

TEST_F(LyingZip, DeclaredSizeOverTheCapIsRefusedBeforeReading) {
  Error e = convert_lying(2u << 20);
  EXPECT_EQ(e.code(), Code::payload_too_large) << e.message();
  EXPECT_EQ(e.details().count("check") ? e.details().at("check") : "", "declared_size");
}

TEST(DocxConverter, HonestPartOverTheCapIsPayloadTooLarge) {
  Registry reg;
  reg.add(make_docx_converter(DocxLimits{1000}));
  std::string body;
  for (int i = 0; i < 100; ++i) body += para("a paragraph of some length");
  Error e = error_of([&] { testing::convert(make_docx(body), "big.docx", reg); });
  EXPECT_EQ(e.code(), Code::payload_too_large);
  EXPECT_EQ(e.details().at("check"), "declared_size");
}

}  // namespace
}  // namespace quarry::convert
