// Factories for the built-in converters. Registry::builtin() wires them with default limits;
// tests (and an embedding application) can build a registry with tighter limits.
#pragma once

#include <cstddef>
#include <memory>

#include "convert/converter.h"

namespace quarry::convert {

// Markdown pass-through: md, markdown, mdx, mkd, mdown, mdwn.
std::unique_ptr<Converter> make_markdown_converter();
// Plain-text pass-through: txt, text, log, rst, adoc, asciidoc, org.
std::unique_ptr<Converter> make_text_converter();
// Source code -> one fenced code block tagged with the language; title = filename.
std::unique_ptr<Converter> make_code_converter();

struct CsvLimits {
  std::size_t max_rows = 100'000;     // data rows kept (the header row is extra)
  std::size_t max_columns = 256;      // columns beyond are dropped
  std::size_t max_cells = 2'000'000;  // rows x columns: bounds the padded table's size
};
// CSV/TSV -> one Markdown table (first record = header row).
std::unique_ptr<Converter> make_csv_converter(CsvLimits limits = {});

// HTML -> Markdown via gumbo.
std::unique_ptr<Converter> make_html_converter();
// PDF -> Markdown via poppler-cpp, one "## Page N" section per page with text.
std::unique_ptr<Converter> make_pdf_converter();

struct DocxLimits {
  // Most bytes read from any one part (word/document.xml, styles, numbering) once inflated.
  // Checked against the size the archive declares and again while inflating (zip bombs lie).
  std::size_t max_part_bytes = 50u << 20;
};
// DOCX -> Markdown via libzip + pugixml.
std::unique_ptr<Converter> make_docx_converter(DocxLimits limits = {});

}  // namespace quarry::convert
