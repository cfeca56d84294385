// HTML -> Markdown via gumbo (an HTML5-conformant parser, so tag soup is repaired the way a
// browser would). The walk keeps what retrieval needs — headings, paragraphs, lists, links,
// emphasis, code, tables, quotes — and drops what is noise for it (scripts, styles, navigation,
// forms, hidden elements).
#include <gumbo.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "convert/builtin.h"
#include "convert/html_dom.h"
#include "convert/html_fallback.h"
#include "convert/text_util.h"
#include "quarry/error.h"

namespace quarry::convert {
namespace {

using detail::html::attr;
using detail::html::children_of;
using detail::html::code_language;
using detail::html::find_tag;
using detail::html::heading_level;
using detail::html::is_block;
using detail::html::is_skipped;
using detail::html::is_text;
using detail::html::raw_text;
using detail::html::tag_of;

// Deeper than this, an element's text is kept but its structure is flattened: bounded recursion
// means hostile nesting cannot exhaust the stack.
constexpr int kMaxDepth = 200;
// Beyond this estimated nesting gumbo is not used at all (see html_fallback.h): real pages stay
// under a few hundred, and gumbo needs ~30 ms at this depth but hours at a million.
constexpr std::size_t kMaxTreeNesting = 4096;

bool is_html_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

// Appends text with HTML whitespace collapsing: a run of whitespace is one space, and none at
// the start of a line.
void append_text(std::string& out, std::string_view text) {
  for (char c : text) {
    if (is_html_space(c)) {
      if (!out.empty() && out.back() != ' ' && out.back() != '\n') out += ' ';
    } else {
      out += c;
    }
  }
}

void trim_in_place(std::string& s) {
  std::size_t b = s.find_first_not_of(" \n");
  if (b == std::string::npos) return s.clear();
  s.erase(0, b);
  s.erase(s.find_last_not_of(" \n") + 1);
}

std::string indent_lines(const std::string& text, std::string_view first, std::string_view rest) {
  std::string out(first);
  for (char c : text) {
    out += c;
    if (c == '\n') out += rest;
  }
  // Indentation on blank lines would only be trimmed later; drop it now.
  std::string cleaned;
  std::size_t pos = 0;
  while (pos <= out.size()) {
    std::size_t end = out.find('\n', pos);
    if (end == std::string::npos) end = out.size();
    std::string_view line(out.data() + pos, end - pos);
    if (line.find_first_not_of(' ') == std::string_view::npos && !line.starts_with('>')) line = {};
    cleaned.append(line);
    if (end < out.size()) cleaned += '\n';
    pos = end + 1;
  }
  return cleaned;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

// Renders one subtree as a sequence of Markdown blocks. Inline content between blocks is
// gathered in `inline_` and becomes a paragraph when a block starts or the walk ends.
class Renderer {
 public:
  explicit Renderer(int depth) : depth_(depth) {}

  std::vector<std::string> render(const GumboNode* node) {
    children(node);
    flush();
    return std::move(blocks_);
  }

 private:
  void children(const GumboNode* node) {
    for (const GumboNode* c : children_of(node)) child(c);
  }

  void child(const GumboNode* n) {
    if (is_text(n)) return append_text(inline_, n->v.text.text);
    if (is_skipped(n) || n->type != GUMBO_NODE_ELEMENT) return;
    if (depth_ > kMaxDepth) return append_text(inline_, raw_text(n) + " ");
    GumboTag t = tag_of(n);
    if (!is_block(t)) return inline_node(n, inline_);
    flush();
    if (int level = heading_level(t)) return heading(n, level);
    switch (t) {
      case GUMBO_TAG_UL:
      case GUMBO_TAG_OL:
      case GUMBO_TAG_MENU:
      case GUMBO_TAG_DIR:
        return push(list(n));
      case GUMBO_TAG_PRE:
        return push(pre(n));
      case GUMBO_TAG_BLOCKQUOTE:
        return push(blockquote(n));
      case GUMBO_TAG_TABLE:
        return table(n);
      case GUMBO_TAG_HR:
        return push("---");
      default:
        break;
    }
    ++depth_;
    children(n);
    --depth_;
    flush();
  }

  void push(std::string block) {
    if (!block.empty()) blocks_.push_back(std::move(block));
  }

  void flush() {
    trim_in_place(inline_);
    if (inline_.empty()) return;
    std::string para;
    std::size_t pos = 0;
    while (pos <= inline_.size()) {
      std::size_t end = std::min(inline_.find('\n', pos), inline_.size());
      std::string line(inline_, pos, end - pos);
      trim_in_place(line);
      para += detail::escape_heading_marker(line);
      if (end < inline_.size()) para += '\n';
      pos = end + 1;
    }
    inline_.clear();
    push(std::move(para));
  }

  // Inline content of `n` as one line (for headings and table cells).
  std::string inline_line(const GumboNode* n) {
    std::vector<std::string> parts = Renderer(depth_ + 1).render(n);
    return detail::collapse_whitespace(join(parts, " "));
  }

  void heading(const GumboNode* n, int level) {
    std::string text = inline_line(n);
    if (!text.empty()) push(std::string(static_cast<std::size_t>(level), '#') + " " + text);
  }

  std::string list(const GumboNode* n) {
    bool ordered = tag_of(n) == GUMBO_TAG_OL;
    long number = 1;
    if (const char* start = attr(n, "start"); ordered && start) {
      number = std::clamp(std::strtol(start, nullptr, 10), 0L, 999'999'999L);
    }
    std::vector<std::string> items;
    for (const GumboNode* c : children_of(n)) {
      GumboTag t = tag_of(c);
      if (is_skipped(c) || (t != GUMBO_TAG_LI && t != GUMBO_TAG_UL && t != GUMBO_TAG_OL)) {
        continue;
      }
      std::string body = join(Renderer(depth_ + 1).render(c), "\n");
      if (body.empty()) continue;
      if (t != GUMBO_TAG_LI) {
        // <ul> directly inside <ul> (invalid, common): nest it under the previous item.
        if (items.empty()) items.push_back("-");
        std::string& last =
            items.back();  // two appends: `"\n" + string` trips g++ 12's -Wrestrict at -O3
        last += '\n';
        last += indent_lines(body, "  ", "  ");
        continue;
      }
      std::string marker = ordered ? std::to_string(number++) + "." : "-";
      std::string pad(marker.size() + 1, ' ');
      items.push_back(indent_lines(body, marker + " ", pad));
    }
    return join(items, "\n");
  }

  std::string pre(const GumboNode* n) {
    std::string code = raw_text(n);
    if (code.starts_with('\n')) code.erase(0, 1);  // HTML drops a newline right after <pre>
    code.erase(code.find_last_not_of(" \t\r\n") + 1);
    if (code.find_first_not_of(" \t\r\n") == std::string::npos) return "";
    std::string fence = detail::code_fence_for(code);
    return fence + code_language(n) + "\n" + code + "\n" + fence;
  }

  std::string blockquote(const GumboNode* n) {
    std::string body = join(Renderer(depth_ + 1).render(n), "\n\n");
    return body.empty() ? "" : indent_lines(body, "> ", "> ");
  }

  void table(const GumboNode* n) {
    std::vector<const GumboNode*> rows;
    const GumboNode* caption = nullptr;
    for (const GumboNode* c : children_of(n)) {
      GumboTag t = tag_of(c);
      if (t == GUMBO_TAG_CAPTION) caption = c;
      if (t == GUMBO_TAG_TR) rows.push_back(c);
      if (t == GUMBO_TAG_THEAD || t == GUMBO_TAG_TBODY || t == GUMBO_TAG_TFOOT) {
        for (const GumboNode* r : children_of(c)) {
          if (tag_of(r) == GUMBO_TAG_TR) rows.push_back(r);
        }
      }
    }
    if (caption) push(inline_line(caption));
    std::vector<std::vector<const GumboNode*>> cells;
    bool layout = false;
    for (const GumboNode* r : rows) {
      cells.emplace_back();
      for (const GumboNode* c : children_of(r)) {
        GumboTag t = tag_of(c);
        if (t != GUMBO_TAG_TD && t != GUMBO_TAG_TH) continue;
        cells.back().push_back(c);
        layout = layout || holds_structure(c, 0);
      }
    }
    if (layout) {
      // A table used for page layout: its cells are sections, not data. Render them in order.
      for (const auto& row : cells) {
        for (const GumboNode* c : row) {
          for (auto& b : Renderer(depth_ + 1).render(c)) push(std::move(b));
        }
      }
      return;
    }
    std::vector<std::vector<std::string>> text;
    for (const auto& row : cells) {
      text.emplace_back();
      for (const GumboNode* c : row) text.back().push_back(inline_line(c));
    }
    push(detail::render_table(text));
  }

  // True when a cell holds headings, lists, code or tables: a layout table, not a data table.
  static bool holds_structure(const GumboNode* n, int depth) {
    if (depth > 8) return false;
    for (const GumboNode* c : children_of(n)) {
      GumboTag t = tag_of(c);
      if (heading_level(t) > 0 || t == GUMBO_TAG_TABLE || t == GUMBO_TAG_UL || t == GUMBO_TAG_OL ||
          t == GUMBO_TAG_PRE || t == GUMBO_TAG_BLOCKQUOTE) {
        return true;
      }
      if (holds_structure(c, depth + 1)) return true;
    }
    return false;
  }

  // Wraps what `n`'s children render in `open`/`close`, keeping edge spaces outside the markers
  // ("a<b> b </b>c" -> "a **b** c"; "** b **" would not be emphasis).
  void wrap(const GumboNode* n, std::string& out, std::string_view open, std::string_view close,
            bool escape_brackets = false) {
    std::size_t start = out.size();
    for (const GumboNode* c : children_of(n)) inline_child(c, out);
    std::string inner = out.substr(start);
    out.resize(start);
    bool lead = inner.starts_with(' ');
    bool trail = inner.ends_with(' ');
    trim_in_place(inner);
    if (lead || (inner.empty() && trail)) append_text(out, " ");
    if (inner.empty()) return;
    if (escape_brackets) {
      // Brackets in link text would end it early.
      std::string escaped;
      for (char c : inner) {
        if (c == '[' || c == ']') escaped += '\\';
        escaped += c;
      }
      inner = std::move(escaped);
    }
    out.append(open).append(inner).append(close);
    if (trail) out += ' ';
  }

  void inline_child(const GumboNode* c, std::string& out) {
    if (is_text(c)) return append_text(out, c->v.text.text);
    if (is_skipped(c) || c->type != GUMBO_NODE_ELEMENT) return;
    if (depth_ > kMaxDepth) return append_text(out, raw_text(c));
    ++depth_;
    inline_node(c, out);
    --depth_;
  }

  void inline_node(const GumboNode* n, std::string& out) {
    switch (tag_of(n)) {
      case GUMBO_TAG_BR:
        while (!out.empty() && out.back() == ' ') out.pop_back();
        out += '\n';
        return;
      case GUMBO_TAG_IMG:
        if (const char* alt = attr(n, "alt")) append_text(out, alt);
        return;
      case GUMBO_TAG_STRONG:
      case GUMBO_TAG_B:
        return wrap(n, out, "**", "**");
      case GUMBO_TAG_EM:
      case GUMBO_TAG_I:
        return wrap(n, out, "*", "*");
      case GUMBO_TAG_DEL:
      case GUMBO_TAG_S:
      case GUMBO_TAG_STRIKE:
        return wrap(n, out, "~~", "~~");
      case GUMBO_TAG_CODE:
      case GUMBO_TAG_KBD:
      case GUMBO_TAG_SAMP:
      case GUMBO_TAG_TT:
        return code_span(n, out);
      case GUMBO_TAG_A:
        return link(n, out);
      default:
        for (const GumboNode* c : children_of(n)) inline_child(c, out);
        return;
    }
  }

  static void code_span(const GumboNode* n, std::string& out) {
    std::string code = detail::collapse_whitespace(raw_text(n));
    if (code.empty()) return;
    std::size_t longest = 0;
    for (std::size_t run = 0, i = 0; i < code.size(); ++i) {
      run = code[i] == '`' ? run + 1 : 0;
      longest = std::max(longest, run);
    }
    std::string ticks(longest + 1, '`');  // a run the code itself cannot close
    bool pad = code.front() == '`' || code.back() == '`';
    out += ticks + (pad ? " " : "") + code + (pad ? " " : "") + ticks;
  }

  void link(const GumboNode* n, std::string& out) {
    const char* href = attr(n, "href");
    std::string target = href ? detail::collapse_whitespace(href) : "";
    bool usable = !target.empty() && !target.starts_with('#') &&
                  !target.starts_with("javascript:") && !target.starts_with("data:");
    if (!usable) {
      for (const GumboNode* c : children_of(n)) inline_child(c, out);
      return;
    }
    std::string dest;
    for (char c : target) {
      // Characters that would end or break a Markdown link destination are percent-encoded.
      if (c == ' ')
        dest += "%20";
      else if (c == '(')
        dest += "%28";
      else if (c == ')')
        dest += "%29";
      else if (c == '<')
        dest += "%3C";
      else if (c == '>')
        dest += "%3E";
      else
        dest += c;
    }
    wrap(n, out, "[", "](" + dest + ")", /*escape_brackets=*/true);
  }

  int depth_;
  std::string inline_;
  std::vector<std::string> blocks_;
};

struct GumboOutputDeleter {
  void operator()(GumboOutput* o) const { gumbo_destroy_output(&kGumboDefaultOptions, o); }
};

class HtmlConverter final : public Converter {
 public:
  std::string id() const override { return "html"; }
  std::vector<std::string> extensions() const override { return {"html", "htm", "xhtml"}; }

  ConvertResult convert(const ConvertInput& in) const override {
    ConvertResult r;
    r.converter = id();
    std::string text = detail::decode_text(in.bytes, "HTML", &r.warnings);
    if (detail::html_nesting_estimate(text) > kMaxTreeNesting) {
      r.warnings.push_back("HTML nested too deeply for structure: converted as plain text");
      std::vector<std::string> paras;
      std::string plain = detail::html_to_plain_text(text);
      std::size_t pos = 0;
      while (pos < plain.size()) {
        std::size_t end = std::min(plain.find("\n\n", pos), plain.size());
        std::string p = detail::collapse_whitespace(plain.substr(pos, end - pos));
        if (!p.empty()) paras.push_back(detail::escape_heading_marker(p));
        pos = end + 2;
      }
      r.markdown = join(paras, "\n\n") + "\n";
      return r;
    }
    GumboOptions options = kGumboDefaultOptions;
    options.max_errors = 0;  // parse errors are repaired, not reported: do not store them
    std::unique_ptr<GumboOutput, GumboOutputDeleter> doc(
        gumbo_parse_with_options(&options, text.data(), text.size()));
    if (!doc) throw Error(Code::corrupt_input, "the HTML parser could not read this file");
    std::vector<std::string> blocks = Renderer(0).render(doc->root);
    r.markdown = join(blocks, "\n\n") + "\n";
    if (const GumboNode* title = find_tag(doc->root, GUMBO_TAG_TITLE)) {
      r.title = detail::tidy_title(raw_text(title));
    }
    if (const GumboNode* h1 = r.title.empty() ? find_tag(doc->root, GUMBO_TAG_H1) : nullptr) {
      r.title = detail::tidy_title(raw_text(h1));
    }
    return r;
  }
};

}  // namespace

std::unique_ptr<Converter> make_html_converter() {
  return std::make_unique<HtmlConverter>();
}

}  // namespace quarry::convert
