// The registry: picks a converter by extension, converts, cleans, and turns every failure into
// a quarry::Error so one bad file is one per-file error in a batch, never a crash.
#include <algorithm>
#include <cctype>
#include <new>
#include <string>

#include "convert/builtin.h"
#include "convert/converter.h"
#include "convert/text_util.h"
#include "quarry/error.h"

namespace quarry::convert {
namespace {

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

}  // namespace

const Registry& Registry::builtin() {
  static const Registry* registry = [] {
    auto* r = new Registry();
    r->add(make_markdown_converter());
    r->add(make_text_converter());
    r->add(make_code_converter());
    r->add(make_csv_converter());
    r->add(make_html_converter());
    r->add(make_pdf_converter());
    r->add(make_docx_converter());
    return r;
  }();
  return *registry;
}

void Registry::add(std::unique_ptr<Converter> c) {
  if (c) converters_.push_back(std::move(c));
}

const Converter* Registry::find(const std::string& extension) const {
  if (extension.empty()) return nullptr;
  // Later registrations win, so an application can override a built-in converter.
  for (auto it = converters_.rbegin(); it != converters_.rend(); ++it) {
    const auto exts = (*it)->extensions();
    if (std::find(exts.begin(), exts.end(), extension) != exts.end()) return it->get();
  }
  return nullptr;
}

std::vector<std::string> Registry::supported_extensions() const {
  std::vector<std::string> all;
  for (const auto& c : converters_) {
    for (auto& e : c->extensions()) all.push_back(std::move(e));
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

ConvertResult Registry::convert(const ConvertInput& in) const {
  std::string ext = in.extension;
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const Converter* c = find(ext);
  if (c == nullptr) {
    std::string supported = join(supported_extensions(), ", ");
    std::string what = ext.empty() ? "files without an extension" : "'." + ext + "' files";
    throw Error(Code::unsupported_format,
                "no converter for " + what + "; supported extensions: " + supported,
                {{"extension", ext}, {"supported", supported}});
  }
  if (!c->available()) {
    throw Error(Code::engine_unavailable,
                "the " + c->id() + " converter's library is not available on this machine",
                {{"converter", c->id()}, {"extension", ext}});
  }
  if (in.bytes.empty()) {
    throw Error(Code::no_content, "the file is empty (0 bytes)", {{"filename", in.filename}});
  }
  ConvertResult result;
  try {
    ConvertInput normalized{in.bytes, in.filename, ext};
    result = c->convert(normalized);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(Code::payload_too_large, "the file is too large to convert in memory",
                {{"converter", c->id()}});
  } catch (const std::exception& e) {
    // Library exceptions (pugixml, poppler, std::) mean the bytes were not what we expected.
    throw Error(Code::corrupt_input, "could not convert the file: " + std::string(e.what()),
                {{"converter", c->id()}});
  }
  result.markdown = clean_markdown(result.markdown);
  if (result.markdown.empty()) {
    throw Error(Code::no_content, "the file has no text content after conversion",
                {{"converter", c->id()}, {"filename", in.filename}});
  }
  result.title = detail::tidy_title(clean_markdown(result.title));
  if (result.converter.empty()) result.converter = c->id();
  return result;
}

}  // namespace quarry::convert
