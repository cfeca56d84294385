// PDF -> Markdown via poppler-cpp. PDF has no reliable structure for headings or lists, so the
// output is the text of each page in reading order under a "## Page N" heading: the chunker
// then never merges text across pages, and a hit's breadcrumb says which page it came from.
// Pages without text get no section (their number is simply skipped).
#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-global.h>
#include <poppler/cpp/poppler-page.h>

#include <climits>
#include <memory>
#include <string>

#include "convert/builtin.h"
#include "convert/text_util.h"
#include "quarry/error.h"

namespace quarry::convert {
namespace {

void ignore_poppler_message(const std::string& /*msg*/, void* /*closure*/) {}

// Poppler reports every syntax problem of a damaged PDF on stderr; a server ingesting untrusted
// files must not spray that into its logs. The error is reported once, as a quarry::Error.
void silence_poppler() {
  static const bool silenced = [] {
    poppler::set_debug_error_function(&ignore_poppler_message, nullptr);
    return true;
  }();
  (void)silenced;
}

std::string to_string(const poppler::ustring& u) {
  poppler::byte_array bytes = u.to_utf8();
  return std::string(bytes.begin(), bytes.end());
}

// Page text as Markdown prose: lines right-trimmed, a leading '#' escaped so extracted text
// never becomes a heading, blank-line runs left to clean_markdown.
std::string page_markdown(const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    line.erase(line.find_last_not_of(" \t\r\f") + 1);
    out += detail::escape_heading_marker(line);
    out += '\n';
  }
  return out;
}

std::string first_line(const std::string& text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = detail::tidy_title(text.substr(pos, end - pos));
    if (!line.empty()) return line;
    pos = end + 1;
  }
  return "";
}

class PdfConverter final : public Converter {
 public:
  std::string id() const override { return "pdf"; }
  std::vector<std::string> extensions() const override { return {"pdf"}; }

  ConvertResult convert(const ConvertInput& in) const override {
    silence_poppler();
    if (in.bytes.size() > static_cast<std::size_t>(INT_MAX)) {
      throw Error(Code::payload_too_large, "PDF files over 2 GiB are not supported");
    }
    // Poppler tolerates junk before the header, as readers do, but a file without one at all is
    // not a PDF; saying so is clearer than a parser failure.
    if (in.bytes.substr(0, 1024).find("%PDF-") == std::string_view::npos) {
      throw Error(Code::corrupt_input, "not a PDF file (no %PDF- header)", {{"format", "pdf"}});
    }
    std::unique_ptr<poppler::document> doc(
        poppler::document::load_from_raw_data(in.bytes.data(), static_cast<int>(in.bytes.size())));
    if (!doc) {
      throw Error(Code::corrupt_input, "the PDF is damaged or truncated and could not be opened",
                  {{"format", "pdf"}});
    }
    if (doc->is_locked()) {
      throw Error(Code::unsupported_format, "password-protected PDFs are not supported",
                  {{"format", "pdf"}, {"reason", "encrypted"}});
    }
    ConvertResult r;
    r.converter = id();
    std::string first_text;
    const int pages = doc->pages();
    for (int i = 0; i < pages; ++i) {
      std::unique_ptr<poppler::page> page(doc->create_page(i));
      if (!page) {
        r.warnings.push_back("page " + std::to_string(i + 1) + " could not be read");
        continue;
      }
      std::string text =
          to_string(page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout));
      if (detail::collapse_whitespace(text).empty()) continue;
      if (first_text.empty()) first_text = text;
      r.markdown += "## Page " + std::to_string(i + 1) + "\n\n" + page_markdown(text) + "\n";
    }
    if (r.markdown.empty()) {
      throw Error(Code::no_content,
                  "the PDF has no extractable text (scanned pages need OCR, which Quarry does not "
                  "do)",
                  {{"format", "pdf"}, {"pages", std::to_string(pages)}});
    }
    r.title = detail::tidy_title(to_string(doc->info_key("Title")));
    if (r.title.empty()) r.title = first_line(first_text);
    return r;
  }
};

}  // namespace

std::unique_ptr<Converter> make_pdf_converter() {
  return std::make_unique<PdfConverter>();
}

}  // namespace quarry::convert
