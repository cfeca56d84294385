// Markdown passes through: it is already the target format. Only the bytes are checked (binary
// junk named .md is refused, invalid UTF-8 repaired); cleaning happens in the registry.
#include "convert/builtin.h"
#include "convert/text_util.h"

namespace quarry::convert {
namespace {

class MarkdownConverter final : public Converter {
 public:
  std::string id() const override { return "markdown"; }
  std::vector<std::string> extensions() const override {
    return {"md", "markdown", "mdx", "mkd", "mdown", "mdwn"};
  }
  ConvertResult convert(const ConvertInput& in) const override {
    ConvertResult r;
    r.converter = id();
    r.markdown = detail::decode_text(in.bytes, "Markdown", &r.warnings);
    r.title = detail::first_heading(r.markdown);
    return r;
  }
};

}  // namespace

std::unique_ptr<Converter> make_markdown_converter() {
  return std::make_unique<MarkdownConverter>();
}

}  // namespace quarry::convert
