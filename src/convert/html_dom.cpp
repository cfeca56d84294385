#include "convert/html_dom.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

namespace quarry::convert::detail::html {
namespace {

constexpr std::array kSkippedTags{
    GUMBO_TAG_HEAD,     GUMBO_TAG_SCRIPT, GUMBO_TAG_STYLE,  GUMBO_TAG_NOSCRIPT, GUMBO_TAG_TEMPLATE,
    GUMBO_TAG_NAV,      GUMBO_TAG_IFRAME, GUMBO_TAG_SVG,    GUMBO_TAG_MATH,     GUMBO_TAG_CANVAS,
    GUMBO_TAG_OBJECT,   GUMBO_TAG_EMBED,  GUMBO_TAG_BUTTON, GUMBO_TAG_SELECT,   GUMBO_TAG_INPUT,
    GUMBO_TAG_TEXTAREA, GUMBO_TAG_AUDIO,  GUMBO_TAG_VIDEO,  GUMBO_TAG_MAP,
};

constexpr std::array kBlockTags{
    GUMBO_TAG_ADDRESS, GUMBO_TAG_ARTICLE,  GUMBO_TAG_ASIDE,      GUMBO_TAG_BLOCKQUOTE,
    GUMBO_TAG_BODY,    GUMBO_TAG_CAPTION,  GUMBO_TAG_CENTER,     GUMBO_TAG_DD,
    GUMBO_TAG_DETAILS, GUMBO_TAG_DIR,      GUMBO_TAG_DIV,        GUMBO_TAG_DL,
    GUMBO_TAG_DT,      GUMBO_TAG_FIELDSET, GUMBO_TAG_FIGCAPTION, GUMBO_TAG_FIGURE,
    GUMBO_TAG_FOOTER,  GUMBO_TAG_FORM,     GUMBO_TAG_H1,         GUMBO_TAG_H2,
    GUMBO_TAG_H3,      GUMBO_TAG_H4,       GUMBO_TAG_H5,         GUMBO_TAG_H6,
    GUMBO_TAG_HEADER,  GUMBO_TAG_HGROUP,   GUMBO_TAG_HR,         GUMBO_TAG_HTML,
    GUMBO_TAG_LI,      GUMBO_TAG_MAIN,     GUMBO_TAG_MENU,       GUMBO_TAG_OL,
    GUMBO_TAG_P,       GUMBO_TAG_PRE,      GUMBO_TAG_SECTION,    GUMBO_TAG_SUMMARY,
    GUMBO_TAG_TABLE,   GUMBO_TAG_TBODY,    GUMBO_TAG_TD,         GUMBO_TAG_TFOOT,
    GUMBO_TAG_TH,      GUMBO_TAG_THEAD,    GUMBO_TAG_TR,         GUMBO_TAG_UL,
};

template <typename Array>
bool contains(const Array& a, GumboTag t) {
  return std::find(a.begin(), a.end(), t) != a.end();
}

bool attr_is(const GumboNode* n, const char* name, const char* value) {
  const char* v = attr(n, name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

}  // namespace

Children children_of(const GumboNode* n) {
  Children out;
  const GumboVector* v = nullptr;
  if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE) {
    v = &n->v.element.children;
  } else if (n->type == GUMBO_NODE_DOCUMENT) {
    v = &n->v.document.children;
  }
  if (v == nullptr) return out;
  out.reserve(v->length);
  for (unsigned i = 0; i < v->length; ++i) out.push_back(static_cast<const GumboNode*>(v->data[i]));
  return out;
}

GumboTag tag_of(const GumboNode* n) {
  return n->type == GUMBO_NODE_ELEMENT ? n->v.element.tag : GUMBO_TAG_UNKNOWN;
}

const char* attr(const GumboNode* n, const char* name) {
  if (n->type != GUMBO_NODE_ELEMENT) return nullptr;
  const GumboAttribute* a = gumbo_get_attribute(&n->v.element.attributes, name);
  return a ? a->value : nullptr;
}

bool is_text(const GumboNode* n) {
  return n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_CDATA ||
         n->type == GUMBO_NODE_WHITESPACE;
}

bool is_skipped(const GumboNode* n) {
  if (n->type == GUMBO_NODE_TEMPLATE || n->type == GUMBO_NODE_COMMENT) return true;
  return contains(kSkippedTags, tag_of(n)) || attr(n, "hidden") != nullptr ||
         attr_is(n, "aria-hidden", "true") || attr_is(n, "role", "navigation");
}

bool is_block(GumboTag t) {
  return contains(kBlockTags, t);
}

int heading_level(GumboTag t) {
  constexpr std::array kHeadings{GUMBO_TAG_H1, GUMBO_TAG_H2, GUMBO_TAG_H3,
                                 GUMBO_TAG_H4, GUMBO_TAG_H5, GUMBO_TAG_H6};
  auto it = std::find(kHeadings.begin(), kHeadings.end(), t);
  return it == kHeadings.end() ? 0 : static_cast<int>(it - kHeadings.begin()) + 1;
}

std::string raw_text(const GumboNode* root) {
  std::string out;
  std::vector<const GumboNode*> stack{root};
  while (!stack.empty()) {
    const GumboNode* n = stack.back();
    stack.pop_back();
    if (is_text(n)) {
      out += n->v.text.text;
    } else if (tag_of(n) == GUMBO_TAG_BR) {
      out += '\n';
    } else if (n == root || !is_skipped(n)) {
      Children kids = children_of(n);
      stack.insert(stack.end(), kids.rbegin(), kids.rend());
    }
  }
  return out;
}

const GumboNode* find_tag(const GumboNode* root, GumboTag tag) {
  std::vector<const GumboNode*> stack{root};
  while (!stack.empty()) {
    const GumboNode* n = stack.back();
    stack.pop_back();
    if (tag_of(n) == tag) return n;
    Children kids = children_of(n);
    stack.insert(stack.end(), kids.rbegin(), kids.rend());
  }
  return nullptr;
}

std::string code_language(const GumboNode* pre) {
  std::vector<const GumboNode*> candidates{pre};
  for (const GumboNode* c : children_of(pre)) {
    if (tag_of(c) == GUMBO_TAG_CODE) candidates.push_back(c);
  }
  for (const GumboNode* n : candidates) {
    const char* cls = attr(n, "class");
    if (cls == nullptr) continue;
    std::string_view c(cls);
    for (std::string_view prefix : {"language-", "lang-"}) {
      std::size_t at = c.find(prefix);
      if (at == std::string_view::npos) continue;
      std::string_view lang = c.substr(at + prefix.size());
      return std::string(lang.substr(0, lang.find(' ')));
    }
  }
  return "";
}

}  // namespace quarry::convert::detail::html
