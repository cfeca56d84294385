// Read-only helpers over gumbo's parse tree, for the HTML converter.
#pragma once

#include <gumbo.h>

#include <string>
#include <vector>

namespace quarry::convert::detail::html {

using Children = std::vector<const GumboNode*>;

// Children of an element, template or document node (empty for text and comments).
Children children_of(const GumboNode* n);
// The element's tag; GUMBO_TAG_UNKNOWN for anything that is not an element.
GumboTag tag_of(const GumboNode* n);
// An attribute's value, or nullptr.
const char* attr(const GumboNode* n, const char* name);
bool is_text(const GumboNode* n);
// Noise for retrieval: scripts, styles, navigation, form controls, embedded media, hidden
// elements, comments.
bool is_skipped(const GumboNode* n);
// Elements that start a new block (paragraph break) rather than flowing inline.
bool is_block(GumboTag t);
// 1..6 for h1..h6, else 0.
int heading_level(GumboTag t);
// Text of a subtree as written (skipped elements left out, <br> as '\n'). Iterative, so any
// depth is safe.
std::string raw_text(const GumboNode* root);
// First element with `tag` in document order, or nullptr. Iterative.
const GumboNode* find_tag(const GumboNode* root, GumboTag tag);
// Language of a <pre> from a "language-x"/"lang-x" class on it or on its <code> child.
std::string code_language(const GumboNode* pre);

}  // namespace quarry::convert::detail::html
