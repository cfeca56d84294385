#include "convert/html_fallback.h"
#include "core/util.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <string>

namespace quarry::convert::detail {
namespace {

bool is_alpha(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}

struct Tag {
  std::string name;  // lower-case, "" for comments/doctype/processing instructions
  bool end = false;
  bool self_closing = false;
  std::size_t next = 0;  // offset just past the tag
};

// The tag starting at html[at] == '<'. Unterminated constructs run to the end of input.
Tag read_tag(std::string_view html, std::size_t at) {
  Tag t;
  auto past = [&](std::string_view token) {
    std::size_t e = html.find(token, at);
    return e == std::string_view::npos ? html.size() : e + token.size();
  };
  if (html.substr(at, 4) == "<!--") {
    t.next = past("-->");
    return t;
  }
  std::size_t i = at + 1;
  if (i < html.size() && html[i] == '/') t.end = true, ++i;
  while (i < html.size() &&
         (is_alpha(html[i]) || std::isdigit(static_cast<unsigned char>(html[i])))) {
    t.name += static_cast<char>(std::tolower(static_cast<unsigned char>(html[i++])));
  }
  t.next = past(">");
  t.self_closing = t.next >= 2 && t.next <= html.size() && html[t.next - 2] == '/';
  return t;
}

bool one_of(const std::string& name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool not_nesting(const std::string& name) {
  return one_of(name, {"area",  "base",  "br",    "col",    "embed",    "hr",      "img",
                       "input", "link",  "meta",  "param",  "source",   "track",   "wbr",
                       "p",     "li",    "dt",    "dd",     "td",       "th",      "tr",
                       "tbody", "thead", "tfoot", "option", "optgroup", "colgroup"});
}

bool raw_text_element(const std::string& name) {
  return one_of(name, {"script", "style", "textarea", "title", "xmp", "noscript"});
}

bool breaks_block(const std::string& name) {
  return one_of(
      name, {"p",   "div",        "br",      "li",      "tr",    "h1", "h2", "h3", "h4", "h5", "h6",
             "pre", "blockquote", "section", "article", "table", "ul", "ol", "hr", "dd", "dt"});
}

void append_utf8(std::string& out, std::uint32_t cp) {
  core::append_utf8(out, cp == 0 ? 0xFFFD : cp);  // &#0; is U+FFFD in HTML
}

// Decodes the character reference at html[at] == '&'; returns the offset past it, or at + 1
// (appending '&') when it is not one we know.
std::size_t decode_reference(std::string_view html, std::size_t at, std::string& out) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kNamed{{
      {"&amp;", "&"},
      {"&lt;", "<"},
      {"&gt;", ">"},
      {"&quot;", "\""},
      {"&apos;", "'"},
      {"&nbsp;", " "},
  }};
  for (const auto& [name, text] : kNamed) {
    if (html.substr(at, name.size()) == name) {
      out += text;
      return at + name.size();
    }
  }
  if (html.substr(at, 2) == "&#") {
    std::size_t i = at + 2;
    bool hex = i < html.size() && (html[i] == 'x' || html[i] == 'X');
    if (hex) ++i;
    std::uint32_t cp = 0;
    std::size_t digits = 0;
    while (i < html.size() && digits < 8 && std::isxdigit(static_cast<unsigned char>(html[i]))) {
      char c = html[i];
      if (!hex && !std::isdigit(static_cast<unsigned char>(c))) break;
      int v = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10);
      cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(v);
      ++i, ++digits;
    }
    if (digits > 0) {
      append_utf8(out, cp);
      return i < html.size() && html[i] == ';' ? i + 1 : i;
    }
  }
  out += '&';
  return at + 1;
}

// Offset of the end tag that closes a raw-text element (or the end of input).
std::size_t skip_raw_text(std::string_view html, std::size_t from, const std::string& name) {
  std::size_t i = from;
  while ((i = html.find("</", i)) != std::string_view::npos) {
    std::size_t j = i + 2;
    std::size_t k = 0;
    while (k < name.size() && j + k < html.size() &&
           std::tolower(static_cast<unsigned char>(html[j + k])) == name[k]) {
      ++k;
    }
    if (k == name.size()) return i;
    i += 2;
  }
  return html.size();
}

}  // namespace

std::size_t html_nesting_estimate(std::string_view html) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  std::size_t i = 0;
  while ((i = html.find('<', i)) != std::string_view::npos) {
    bool tag_like =
        i + 1 < html.size() && (is_alpha(html[i + 1]) || html[i + 1] == '/' || html[i + 1] == '!');
    if (!tag_like) {
      ++i;
      continue;
    }
    Tag t = read_tag(html, i);
    i = t.next;
    if (t.name.empty() || t.self_closing || not_nesting(t.name)) continue;
    if (t.end) {
      depth -= depth > 0 ? 1 : 0;
      continue;
    }
    if (raw_text_element(t.name)) {
      i = skip_raw_text(html, i, t.name);
      continue;
    }
    deepest = std::max(deepest, ++depth);
  }
  return deepest;
}

std::string html_to_plain_text(std::string_view html) {
  std::string out;
  out.reserve(html.size() / 2);
  std::size_t i = 0;
  while (i < html.size()) {
    char c = html[i];
    if (c == '&') {
      i = decode_reference(html, i, out);
      continue;
    }
    bool tag_like = c == '<' && i + 1 < html.size() &&
                    (is_alpha(html[i + 1]) || html[i + 1] == '/' || html[i + 1] == '!');
    if (!tag_like) {
      out += c;
      ++i;
      continue;
    }
    Tag t = read_tag(html, i);
    i = t.next;
    if (!t.end && raw_text_element(t.name)) {
      std::size_t close = skip_raw_text(html, i, t.name);
      i = close < html.size() ? read_tag(html, close).next : close;
      continue;
    }
    if (breaks_block(t.name)) out += "\n\n";
  }
  return out;
}

}  // namespace quarry::convert::detail
