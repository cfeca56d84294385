// CSV/TSV -> Markdown tables, with RFC 4180 quoting and the documented caps.
#include <gtest/gtest.h>

#include <algorithm>

#include "convert/builtin.h"
#include "convert_fixtures.h"

namespace quarry::convert {
namespace {

using testing::code_of;
using testing::convert;

TEST(CsvConverter, FirstRecordIsTheHeaderRow) {
  ConvertResult r = convert("name,age\nAda,36\nAlan,41\n", "people.csv");
  EXPECT_EQ(r.markdown,
            "| name | age |\n"
            "| --- | --- |\n"
            "| Ada | 36 |\n"
            "| Alan | 41 |\n");
  EXPECT_EQ(r.title, "people.csv");
  EXPECT_EQ(r.converter, "csv");
}

TEST(CsvConverter, HandlesRfc4180QuotingWithDelimitersQuotesAndNewlines) {
  ConvertResult r =
      convert("a,b,c\r\n\"x, y\",\"he said \"\"hi\"\"\",\"line1\r\nline2\"\r\n", "q.csv");
  EXPECT_EQ(r.markdown,
            "| a | b | c |\n"
            "| --- | --- | --- |\n"
            "| x, y | he said \"hi\" | line1 line2 |\n");
}

TEST(CsvConverter, EscapesPipesInCells) {
  ConvertResult r = convert("expr\na|b\n", "p.csv");
  EXPECT_EQ(r.markdown, "| expr |\n| --- |\n| a\\|b |\n");
}

TEST(CsvConverter, PadsRaggedRows) {
  ConvertResult r = convert("a,b\n1\n1,2,3\n", "r.csv");
  EXPECT_EQ(r.markdown,
            "| a | b | |\n"
            "| --- | --- | --- |\n"
            "| 1 | | |\n"
            "| 1 | 2 | 3 |\n");
}

TEST(CsvConverter, SkipsBlankAndEmptyRecords) {
  ConvertResult r = convert("a,b\n\n,,\n1,2\n\n", "b.csv");
  EXPECT_EQ(r.markdown, "| a | b |\n| --- | --- |\n| 1 | 2 |\n");
}

TEST(CsvConverter, TsvSplitsOnTabs) {
  ConvertResult r = convert("k\tv\nx,y\t1\n", "t.tsv");
  EXPECT_EQ(r.markdown, "| k | v |\n| --- | --- |\n| x,y | 1 |\n");
}

TEST(CsvConverter, SniffsSemicolonSeparatedFiles) {
  ConvertResult r = convert("Name;Preis\nBrot;2,50\n", "de.csv");
  EXPECT_EQ(r.markdown, "| Name | Preis |\n| --- | --- |\n| Brot | 2,50 |\n");
}

TEST(CsvConverter, SniffsTabSeparatedFilesNamedCsv) {
  ConvertResult r = convert("a\tb, c\tz\n1\t2\t3\n", "tabs.csv");
  EXPECT_EQ(r.markdown, "| a | b, c | z |\n| --- | --- | --- |\n| 1 | 2 | 3 |\n");
}

TEST(CsvConverter, UnterminatedQuoteRunsToTheEndWithAWarning) {
  ConvertResult r = convert("a,b\n1,\"open\nstill open", "u.csv");
  EXPECT_EQ(r.markdown, "| a | b |\n| --- | --- |\n| 1 | open still open |\n");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("unterminated"), std::string::npos);
}

TEST(CsvConverter, StrayQuoteInsideAnUnquotedFieldIsLiteral) {
  ConvertResult r = convert("h\n5\" screen\n", "s.csv");
  EXPECT_EQ(r.markdown, "| h |\n| --- |\n| 5\" screen |\n");
}

TEST(CsvConverter, CapsRowsAndColumnsWithWarnings) {
  Registry reg;
  reg.add(make_csv_converter(CsvLimits{/*max_rows=*/2, /*max_columns=*/2, /*max_cells=*/1000}));
  ConvertResult r = testing::convert("a,b,c\n1,2,3\n4,5,6\n7,8,9\n", "big.csv", reg);
  EXPECT_EQ(r.markdown, "| a | b |\n| --- | --- |\n| 1 | 2 |\n| 4 | 5 |\n");
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find("columns beyond 2"), std::string::npos);
  EXPECT_NE(r.warnings[1].find("truncated to 2 data rows"), std::string::npos);
}

TEST(CsvConverter, CellBudgetBoundsAWideRowTimesManyRows) {
  Registry reg;
  reg.add(make_csv_converter(CsvLimits{1000, 100, /*max_cells=*/50}));
  std::string csv = std::string(9, ',') + "x\n";  // 10 columns
  for (int i = 0; i < 100; ++i) csv += "y\n";
  ConvertResult r = testing::convert(csv, "wide.csv", reg);
  // 5 rows x 10 columns = 50 cells: the header and four data rows.
  EXPECT_EQ(std::count(r.markdown.begin(), r.markdown.end(), '\n'), 6);
  ASSERT_EQ(r.warnings.size(), 1u);
}

TEST(CsvConverter, ErrorsForEmptyWhitespaceAndBinary) {
  EXPECT_EQ(code_of("", "e.csv"), Code::no_content);
  EXPECT_EQ(code_of("\n\n  \n", "e.csv"), Code::no_content);
  EXPECT_EQ(code_of(",,,\n,,\n", "e.csv"), Code::no_content);
  EXPECT_EQ(code_of(std::string("a,b\0\0\0", 6), "e.csv"), Code::corrupt_input);
}

}  // namespace
}  // namespace quarry::convert
