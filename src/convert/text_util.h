// Helpers shared by the converters: decoding bytes that claim to be text, and small Markdown
// writers (tables, code fences). Internal to src/convert/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace quarry::convert::detail {

// True when bytes are almost certainly not text: a NUL byte anywhere, or (in the first 64 KiB)
// more than 10% control characters or more than 25% bytes of invalid UTF-8.
bool looks_binary(std::string_view bytes);

// Bytes of a text format -> valid UTF-8. Strips a UTF-8 BOM, transcodes UTF-16 that starts with
// a BOM, replaces invalid UTF-8 with U+FFFD (adding a warning). Throws corrupt_input ("file looks
// binary") when looks_binary() says so; `format` names the format in that message.
std::string decode_text(std::string_view bytes, std::string_view format,
                        std::vector<std::string>* warnings);

// Runs of whitespace (including newlines) -> one space; leading/trailing whitespace removed.
std::string collapse_whitespace(std::string_view s);

// A title candidate: whitespace collapsed, cut to at most `max_bytes` on a UTF-8 boundary.
std::string tidy_title(std::string_view s, std::size_t max_bytes = 200);

// Text of the first ATX heading ("# Title") outside fenced code, or "".
std::string first_heading(std::string_view md);

// A backtick fence longer than any backtick run in `code` (at least 3).
std::string code_fence_for(std::string_view code);

// One GFM table cell: newlines become spaces, '|' is escaped, surrounding whitespace trimmed.
std::string escape_table_cell(std::string_view cell);

// A GFM table: rows[0] is the header row; short rows are padded with empty cells. Cells are
// escaped here. Returns "" for no rows. No trailing newline.
std::string render_table(const std::vector<std::vector<std::string>>& rows);

// Escapes a leading '#' so a line of extracted text is not read as a heading.
std::string escape_heading_marker(std::string_view line);

}  // namespace quarry::convert::detail
