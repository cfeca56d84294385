// Plain text passes through unchanged (it is valid Markdown prose); the bytes are checked for
// binary content and repaired to UTF-8.
#include "convert/builtin.h"
#include "convert/text_util.h"

namespace quarry::convert {
namespace {

// The first non-empty line, when it is short enough to be a title rather than a paragraph.
std::string first_line_title(std::string_view text) {
  constexpr std::size_t kMaxTitleLine = 120;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line = detail::collapse_whitespace(text.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) continue;
    return line.size() <= kMaxTitleLine ? line : "";
  }
  return "";
}

class TextConverter final : public Converter {
 public:
  std::string id() const override { return "text"; }
  std::vector<std::string> extensions() const override {
    return {"txt", "text", "log", "rst", "adoc", "asciidoc", "org"};
  }
  ConvertResult convert(const ConvertInput& in) const override {
    ConvertResult r;
    r.converter = id();
    r.markdown = detail::decode_text(in.bytes, "plain", &r.warnings);
    // A log's first line is an entry, not a title.
    if (in.extension != "log") r.title = first_line_title(r.markdown);
    return r;
  }
};

}  // namespace

std::unique_ptr<Converter> make_text_converter() {
  return std::make_unique<TextConverter>();
}

}  // namespace quarry::convert
