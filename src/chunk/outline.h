// Structure the chunkers cut along: where blocks, headings and verbatim regions begin, as byte
// offsets into the text. Internal to src/chunk/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace quarry::chunk {

// How good a place the boundary between two tokens is for a cut; higher is better.
enum Level : std::uint8_t {
  kAdjacent = 0,    // no white space between the tokens (inside a word, "foo." ...)
  kSpace = 1,       // white space: a word boundary
  kLine = 2,        // a sentence end; a line break inside code or a table
  kInnerBlock = 3,  // a nested block (list item, table row, quoted paragraph), a blank line
  kTopBlock = 4,    // a top-level block (paragraph, list, table, fence); a code definition
};

// A preferred cut before the line that starts at `offset`.
struct Mark {
  std::uint32_t offset = 0;
  std::uint8_t level = kAdjacent;
};

struct ByteRange {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

struct Heading {
  std::uint32_t offset = 0;  // start of the heading's line
  int level = 0;             // 1..6
  std::string text;          // white space collapsed
};

struct MarkdownOutline {
  std::vector<Heading> headings;    // top-level headings (not those inside lists or quotes)
  std::vector<Mark> marks;          // sorted by offset, one per offset
  std::vector<ByteRange> verbatim;  // code blocks, tables, HTML blocks: sorted, disjoint
};

// Parses `md` with md4c (GitHub dialect). Blocks md4c reports without any text in the input
// (thematic breaks, empty fences) get no mark: they stay with the block before them.
MarkdownOutline outline_markdown(std::string_view md);

// Source code: kTopBlock before top-level definitions (with the comments and decorators directly
// above them) and after a column-0 closing brace followed by a blank line; kInnerBlock after any
// blank line. Sorted by offset, one per offset.
std::vector<Mark> outline_code(std::string_view src);

// Sorts marks by offset and keeps the highest level per offset.
void normalise_marks(std::vector<Mark>& marks);

}  // namespace quarry::chunk
