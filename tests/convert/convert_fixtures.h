// Fixtures for the converter tests, generated in code so every byte is visible and reviewable:
// a hand-written PDF with a correct xref table, zip archives (DOCX) built with libzip, and
// helpers to run the registry and check error codes.
#pragma once

#include <gtest/gtest.h>
#include <zip.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "convert/converter.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry::convert::testing {

inline ConvertResult convert(const std::string& bytes, const std::string& filename,
                             const Registry& registry = Registry::builtin()) {
  std::size_t dot = filename.rfind('.');
  std::string ext = dot == std::string::npos ? "" : filename.substr(dot + 1);
  return registry.convert(ConvertInput{bytes, filename, ext});
}

using quarry::testing::error_of;

inline Code code_of(const std::string& bytes, const std::string& filename) {
  return quarry::testing::code_of([&] { convert(bytes, filename); });
}

// --- PDF -------------------------------------------------------------------------------------

inline std::string pdf_string(const std::string& s) {
  std::string out = "(";
  for (char c : s) {
    if (c == '(' || c == ')' || c == '\\') out += '\\';
    out += c;
  }
  return out + ")";
}

// A minimal PDF 1.4: one page per entry of `pages` (each line of it one Tj in Helvetica), an
// optional /Info /Title, and an xref table whose offsets are computed, not hard-coded.
inline std::string make_pdf(const std::vector<std::string>& pages, const std::string& title = "") {
  const int n = static_cast<int>(pages.size());
  std::vector<std::string> objs;
  std::string kids;
  for (int i = 0; i < n; ++i) kids += std::to_string(4 + 2 * i) + " 0 R ";
  objs.push_back("<< /Type /Catalog /Pages 2 0 R >>");
  objs.push_back("<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(n) + " >>");
  objs.push_back("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  for (int i = 0; i < n; ++i) {
    objs.push_back(
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << "
        "/F1 3 0 R >> >> /Contents " +
        std::to_string(5 + 2 * i) + " 0 R >>");
    std::string content;
    int y = 720;
    std::size_t pos = 0;
    const std::string& text = pages[static_cast<std::size_t>(i)];
    while (pos < text.size()) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      content += "BT /F1 12 Tf 72 " + std::to_string(y) + " Td " +
                 pdf_string(text.substr(pos, end - pos)) + " Tj ET\n";
      y -= 18;
      pos = end + 1;
    }
    objs.push_back("<< /Length " + std::to_string(content.size()) + " >>\nstream\n" + content +
                   "endstream");
  }
  objs.push_back("<< /Title " + pdf_string(title) + " /Producer (quarry tests) >>");
  const int info = static_cast<int>(objs.size());

  std::string out = "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n";
  std::vector<std::size_t> offsets;
  for (std::size_t i = 0; i < objs.size(); ++i) {
    offsets.push_back(out.size());
    out += std::to_string(i + 1) + " 0 obj\n" + objs[i] + "\nendobj\n";
  }
  const std::size_t xref = out.size();
  out += "xref\n0 " + std::to_string(objs.size() + 1) + "\n0000000000 65535 f \n";
  char entry[32];
  for (std::size_t off : offsets) {
    std::snprintf(entry, sizeof entry, "%010zu 00000 n \n", off);  // exactly 20 bytes
    out += entry;
  }
  out += "trailer\n<< /Size " + std::to_string(objs.size() + 1) + " /Root 1 0 R";
  if (!title.empty()) out += " /Info " + std::to_string(info) + " 0 R";
  out += " >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
  return out;
}

// --- zip / DOCX --------------------------------------------------------------------------------

using Entries = std::vector<std::pair<std::string, std::string>>;

// A zip archive holding `entries` (deflated), plus `extra` added through `add` (for streamed
// sources such as a zip bomb's generator).
inline std::string make_zip(const Entries& entries,
                            const std::function<void(zip_t*)>& add = nullptr) {
  quarry::testing::TempDir dir;
  const std::string path = (dir / "archive.zip").string();
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  EXPECT_NE(z, nullptr);
  if (z == nullptr) return "";
  for (const auto& [name, data] : entries) {
    zip_source_t* src = zip_source_buffer(z, data.data(), data.size(), 0);
    EXPECT_GE(zip_file_add(z, name.c_str(), src, ZIP_FL_OVERWRITE), 0);
  }
  if (add) add(z);
  EXPECT_EQ(zip_close(z), 0);  // the buffers above must stay alive until here
  return quarry::testing::read_file(path);
}

inline const char* kWordNs =
    "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\" "
    "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"";

inline std::string document_xml(const std::string& body) {
  return std::string("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n") +
         "<w:document " + kWordNs + "><w:body>" + body + "</w:body></w:document>";
}

inline Entries docx_entries(const std::string& body, const Entries& extra = {}) {
  Entries e{
      {"[Content_Types].xml",
       "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types "
       "xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default "
       "Extension=\"xml\" ContentType=\"application/xml\"/><Override PartName=\"/word/"
       "document.xml\" ContentType=\"application/"
       "vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/></Types>"},
      {"_rels/.rels",
       "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships "
       "xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship "
       "Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
       "officeDocument\" Target=\"word/document.xml\"/></Relationships>"},
      {"word/document.xml", document_xml(body)},
  };
  e.insert(e.end(), extra.begin(), extra.end());
  return e;
}

inline std::string make_docx(const std::string& body, const Entries& extra = {}) {
  return make_zip(docx_entries(body, extra));
}

// <w:p> with an optional style, list numbering and runs.
inline std::string para(const std::string& text, const std::string& style = "",
                        const std::string& num_id = "", int ilvl = 0) {
  std::string ppr;
  if (!style.empty()) ppr += "<w:pStyle w:val=\"" + style + "\"/>";
  if (!num_id.empty()) {
    ppr += "<w:numPr><w:ilvl w:val=\"" + std::to_string(ilvl) + "\"/><w:numId w:val=\"" + num_id +
           "\"/></w:numPr>";
  }
  return "<w:p>" + (ppr.empty() ? "" : "<w:pPr>" + ppr + "</w:pPr>") +
         "<w:r><w:t xml:space=\"preserve\">" + text + "</w:t></w:r></w:p>";
}

// Overwrites the uncompressed size of `name` in its local header and central directory entry,
// to build an archive that lies about how far an entry inflates.
inline void patch_uncompressed_size(std::string& zip_bytes, const std::string& name,
                                    std::uint32_t size) {
  auto put32 = [&](std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) zip_bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  };
  auto get16 = [&](std::size_t at) {
    return static_cast<std::size_t>(static_cast<unsigned char>(zip_bytes[at])) |
           (static_cast<std::size_t>(static_cast<unsigned char>(zip_bytes[at + 1])) << 8);
  };
  int patched = 0;
  for (std::size_t at = 0; at + 46 < zip_bytes.size(); ++at) {
    if (zip_bytes.compare(at, 4, "PK\x03\x04") == 0 &&
        zip_bytes.compare(at + 30, name.size(), name) == 0 && get16(at + 26) == name.size()) {
      put32(at + 22, size), ++patched;
    } else if (zip_bytes.compare(at, 4, "PK\x01\x02") == 0 &&
               zip_bytes.compare(at + 46, name.size(), name) == 0 &&
               get16(at + 28) == name.size()) {
      put32(at + 24, size), ++patched;
    }
  }
  EXPECT_EQ(patched, 2) << "local header and central directory entry";
}

}  // namespace quarry::convert::testing
