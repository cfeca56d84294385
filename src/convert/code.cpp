// Source code becomes one fenced code block tagged with its language, so the Markdown chunker
// and any renderer treat it as code (no heading detection inside, whitespace kept).
#include <string_view>
#include <utility>

#include "convert/builtin.h"
#include "convert/text_util.h"

namespace quarry::convert {
namespace {

// Extension -> info-string language (the names GitHub/highlight.js recognise).
constexpr std::pair<std::string_view, std::string_view> kLanguages[] = {
    {"c", "c"},
    {"h", "c"},
    {"cc", "cpp"},
    {"cpp", "cpp"},
    {"cxx", "cpp"},
    {"hh", "cpp"},
    {"hpp", "cpp"},
    {"hxx", "cpp"},
    {"cs", "csharp"},
    {"java", "java"},
    {"kt", "kotlin"},
    {"kts", "kotlin"},
    {"scala", "scala"},
    {"groovy", "groovy"},
    {"gradle", "groovy"},
    {"go", "go"},
    {"rs", "rust"},
    {"swift", "swift"},
    {"py", "python"},
    {"pyi", "python"},
    {"rb", "ruby"},
    {"php", "php"},
    {"pl", "perl"},
    {"pm", "perl"},
    {"lua", "lua"},
    {"r", "r"},
    {"jl", "julia"},
    {"dart", "dart"},
    {"js", "javascript"},
    {"mjs", "javascript"},
    {"cjs", "javascript"},
    {"jsx", "jsx"},
    {"ts", "typescript"},
    {"tsx", "tsx"},
    {"vue", "vue"},
    {"svelte", "svelte"},
    {"css", "css"},
    {"scss", "scss"},
    {"less", "less"},
    {"sh", "bash"},
    {"bash", "bash"},
    {"zsh", "zsh"},
    {"fish", "fish"},
    {"ps1", "powershell"},
    {"sql", "sql"},
    {"json", "json"},
    {"yaml", "yaml"},
    {"yml", "yaml"},
    {"toml", "toml"},
    {"ini", "ini"},
    {"xml", "xml"},
    {"proto", "protobuf"},
    {"cmake", "cmake"},
    {"graphql", "graphql"},
};

std::string_view language_for(std::string_view ext) {
  for (const auto& [e, lang] : kLanguages) {
    if (e == ext) return lang;
  }
  return "";
}

class CodeConverter final : public Converter {
 public:
  std::string id() const override { return "code"; }
  std::vector<std::string> extensions() const override {
    std::vector<std::string> exts;
    for (const auto& [e, lang] : kLanguages) exts.emplace_back(e);
    return exts;
  }
  ConvertResult convert(const ConvertInput& in) const override {
    ConvertResult r;
    r.converter = id();
    std::string code = detail::decode_text(in.bytes, "source code", &r.warnings);
    std::string fence = detail::code_fence_for(code);
    r.markdown = fence + std::string(language_for(in.extension)) + "\n" + code;
    if (!code.empty() && code.back() != '\n') r.markdown += '\n';
    r.markdown += fence + "\n";
    r.title = in.filename;
    // An empty fence is not content: let the registry report no_content.
    if (detail::collapse_whitespace(code).empty()) r.markdown.clear();
    return r;
  }
};

}  // namespace

std::unique_ptr<Converter> make_code_converter() {
  return std::make_unique<CodeConverter>();
}

}  // namespace quarry::convert
