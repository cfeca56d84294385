// Where source code splits well, found line by line without parsing any language: definitions
// start at column 0 in nearly every language people keep in a knowledge base, and a column-0
// closing brace followed by a blank line ends one in the brace languages whose definitions start
// with a type name (C, C++, Java) rather than a keyword.
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "chunk/outline.h"

namespace quarry::chunk {
namespace {

constexpr std::string_view kDefinitionStarts[] = {
    "def ",      "async def ", "class ",     "fn ",        "pub ",    "func ",
    "function ", "async ",     "struct ",    "impl ",      "impl<",   "interface ",
    "public ",   "private ",   "protected ", "internal ",  "export ", "const ",
    "#define ",  "enum ",      "trait ",     "type ",      "module ", "namespace ",
    "template<", "template ",  "package ",   "static ",    "union ",  "typedef ",
    "object ",   "fun ",       "sub ",       "defmodule ", "(defun ", "abstract ",
};

// Comment and decorator lines directly above a definition belong to it.
constexpr std::string_view kPreambleStarts[] = {"//", "/*", " *", "#", "@", "--"};

bool starts_with_any(std::string_view line, const auto& prefixes) {
  for (std::string_view p : prefixes) {
    if (line.substr(0, p.size()) == p) return true;
  }
  return false;
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

bool is_definition(std::string_view line) {
  return starts_with_any(line, kDefinitionStarts);
}

bool is_preamble(std::string_view line) {
  if (line.substr(0, 8) == "#define " || line.substr(0, 9) == "#include ") return false;
  return starts_with_any(line, kPreambleStarts);
}

}  // namespace

std::vector<Mark> outline_code(std::string_view src) {
  std::vector<Mark> marks;
  bool after_blank = false;
  bool closed_brace = false;   // the last non-blank line was a column-0 closing brace
  std::int64_t preamble = -1;  // start of the comment/decorator lines just above, if any
  std::size_t at = 0;
  while (at < src.size()) {
    const void* nl = std::memchr(src.data() + at, '\n', src.size() - at);
    std::size_t end =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - src.data()) : src.size();
    std::string_view line = src.substr(at, end - at);
    auto offset = static_cast<std::uint32_t>(at);
    if (is_blank(line)) {
      after_blank = true;
      preamble = -1;
    } else {
      if (after_blank) marks.push_back({offset, closed_brace ? kTopBlock : kInnerBlock});
      if (is_definition(line)) {
        marks.push_back({preamble >= 0 ? static_cast<std::uint32_t>(preamble) : offset, kTopBlock});
      }
      if (is_preamble(line)) {
        if (preamble < 0) preamble = offset;
      } else {
        preamble = -1;
      }
      closed_brace = !line.empty() && line[0] == '}';
      after_blank = false;
    }
    at = end + 1;
  }
  normalise_marks(marks);
  return marks;
}

}  // namespace quarry::chunk
