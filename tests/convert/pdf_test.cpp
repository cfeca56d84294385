// PDF via poppler: text per page under "## Page N", titles, and damaged files as clean errors.
#include <gtest/gtest.h>

#include "convert_fixtures.h"

namespace quarry::convert {
namespace {

using testing::code_of;
using testing::convert;
using testing::error_of;
using testing::make_pdf;

bool has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(PdfFixture, HasAConsistentXrefTable) {
  std::string pdf = make_pdf({"x"}, "t");
  std::size_t startxref = std::stoul(pdf.substr(pdf.rfind("startxref\n") + 10));
  EXPECT_EQ(pdf.compare(startxref, 4, "xref"), 0);
  std::size_t first = pdf.find("0000000000 65535 f \n") + 20;
  std::size_t offset = std::stoul(pdf.substr(first, 10));
  EXPECT_EQ(pdf.compare(offset, 7, "1 0 obj"), 0);
}

TEST(PdfConverter, ExtractsTextPerPageUnderPageHeadings) {
  ConvertResult r =
      convert(make_pdf({"Hello Quarry\nSecond line", "Another page"}, "Quarterly Report"), "r.pdf");
  EXPECT_EQ(r.converter, "pdf");
  EXPECT_EQ(r.title, "Quarterly Report");
  std::size_t p1 = r.markdown.find("## Page 1\n\n");
  std::size_t hello = r.markdown.find("Hello Quarry");
  std::size_t p2 = r.markdown.find("## Page 2\n\n");
  std::size_t another = r.markdown.find("Another page");
  ASSERT_NE(p1, std::string::npos) << r.markdown;
  EXPECT_EQ(p1, 0u) << r.markdown;
  ASSERT_NE(hello, std::string::npos) << r.markdown;
  ASSERT_NE(p2, std::string::npos) << r.markdown;
  ASSERT_NE(another, std::string::npos) << r.markdown;
  EXPECT_LT(p1, hello);
  EXPECT_LT(hello, p2);
  EXPECT_LT(p2, another);
  EXPECT_TRUE(has(r.markdown, "Second line")) << r.markdown;
  EXPECT_EQ(r.markdown.back(), '\n');
  EXPECT_NE(r.markdown.substr(r.markdown.size() - 2), "\n\n");
}

TEST(PdfConverter, TitleFallsBackToTheFirstLineOfText) {
  ConvertResult r = convert(make_pdf({"\nIntroduction to Widgets\nbody"}), "w.pdf");
  EXPECT_EQ(r.title, "Introduction to Widgets");
}

TEST(PdfConverter, PagesWithoutTextGetNoSectionButKeepTheirNumbers) {
  ConvertResult r = convert(make_pdf({"first", "", "third"}), "gap.pdf");
  EXPECT_TRUE(has(r.markdown, "## Page 1")) << r.markdown;
  EXPECT_FALSE(has(r.markdown, "## Page 2")) << r.markdown;
  EXPECT_TRUE(has(r.markdown, "## Page 3")) << r.markdown;
}

TEST(PdfConverter, ExtractedHashLinesAreNotHeadings) {
  ConvertResult r = convert(make_pdf({"# of units"}), "h.pdf");
  EXPECT_TRUE(has(r.markdown, "\\# of units")) << r.markdown;
}

TEST(PdfConverter, PdfWithoutAnyTextHasNoContent) {
  Error e = error_of([] { convert(make_pdf({"", ""}), "scan.pdf"); });
  EXPECT_EQ(e.code(), Code::no_content);
  EXPECT_TRUE(has(e.message(), "OCR")) << e.message();
}

TEST(PdfConverter, RandomBytesAreCorruptInput) {
  std::string junk;
  for (int i = 0; i < 5000; ++i) junk += static_cast<char>((i * 2654435761u) >> 13);
  EXPECT_EQ(code_of(junk, "junk.pdf"), Code::corrupt_input);
  EXPECT_EQ(code_of("%PDF-1.7\n" + junk, "junk2.pdf"), Code::corrupt_input);
  EXPECT_EQ(code_of("not a pdf at all", "text.pdf"), Code::corrupt_input);
}

TEST(PdfConverter, TruncatedPdfIsAnErrorOrPartialTextNeverACrash) {
  std::string pdf = make_pdf({"Hello truncated world", "page two"}, "T");
  for (std::size_t cut : {9ul, 40ul, pdf.size() / 3, pdf.size() / 2, pdf.size() - 30}) {
    Error e = error_of([&] { convert(pdf.substr(0, cut), "t.pdf"); });
    EXPECT_TRUE(e.code() == Code::ok || e.code() == Code::corrupt_input ||
                e.code() == Code::no_content)
        << "cut at " << cut << ": " << e.message();
  }
  EXPECT_EQ(code_of(pdf.substr(0, 9), "t.pdf"), Code::corrupt_input);
}

TEST(PdfConverter, DamagedPdfsDoNotWriteToStderr) {
  ::testing::internal::CaptureStderr();
  std::string pdf = make_pdf({"x"});
  code_of(pdf.substr(0, pdf.size() / 2), "t.pdf");
  code_of("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 99 0 R >> endobj\n%%EOF", "u.pdf");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(PdfConverter, EmptyFileHasNoContent) {
  EXPECT_EQ(code_of("", "e.pdf"), Code::no_content);
}

}  // namespace
}  // namespace quarry::convert
