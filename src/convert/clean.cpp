// clean_markdown (SPEC §2.2): the last step of every conversion, so downstream code (chunker,
// FTS, snippets) can rely on valid UTF-8, '\n' newlines, no control characters and a heading
// outline without holes.
#include <string>
#include <string_view>

#include "convert/converter.h"
#include "core/util.h"

namespace quarry::convert {
namespace {

// '\r\n' and '\r' -> '\n'; C0 controls except tab/newline, DEL, C1 controls and U+FEFF dropped.
// Input must be valid UTF-8 (so a 0xC2 lead byte is always followed by a continuation byte).
std::string normalize_characters(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else if (c == '\n' || c == '\t') {
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      continue;
    } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      ++i;  // U+0080..U+009F
    } else if (s.substr(i, 3) == "\xEF\xBB\xBF") {
      i += 2;  // U+FEFF: a BOM or zero-width no-break space, invisible either way
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// A fence line: up to 3 spaces of indent (more inside list items, so any indent is accepted),
// then 3+ backticks or tildes. Returns the run length and sets `fence_char`; 0 if not a fence.
std::size_t fence_run(std::string_view line, char* fence_char) {
  std::size_t lead = line.find_first_not_of(' ');
  if (lead == std::string_view::npos) return 0;
  char c = line[lead];
  if (c != '`' && c != '~') return 0;
  std::size_t end = line.find_first_not_of(c, lead);
  std::size_t run = (end == std::string_view::npos ? line.size() : end) - lead;
  if (run < 3) return 0;
  *fence_char = c;
  return run;
}

// Level of an ATX heading ("## x", up to 3 spaces of indent) or 0; `text_at` receives the offset
// just past the '#' run.
int heading_level(std::string_view line, std::size_t* text_at) {
  std::size_t lead = line.find_first_not_of(' ');
  if (lead == std::string_view::npos || lead > 3 || line[lead] != '#') return 0;
  std::size_t end = line.find_first_not_of('#', lead);
  if (end == std::string_view::npos) end = line.size();
  std::size_t level = end - lead;
  if (level > 6 || (end < line.size() && line[end] != ' ' && line[end] != '\t')) return 0;
  *text_at = end;
  return static_cast<int>(level);
}

}  // namespace

std::string clean_markdown(std::string_view md) {
  std::string text = core::is_valid_utf8(md) ? normalize_characters(md)
                                             : normalize_characters(core::repair_utf8(md));
  std::string out;
  out.reserve(text.size() + 1);
  bool pending_blank = false;
  char fence_char = 0;
  std::size_t fence_len = 0;  // > 0 while inside a fenced code block
  int prev_level = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    std::size_t keep = line.find_last_not_of(" \t");
    line.resize(keep == std::string::npos ? 0 : keep + 1);

    char c = 0;
    std::size_t run = fence_run(line, &c);
    if (fence_len > 0) {
      // Inside code, lines (blank ones too) are kept as written.
      bool closes = run >= fence_len && c == fence_char &&
                    line.find_first_not_of(c, line.find(c)) == std::string::npos;
      if (closes) fence_len = 0;
      out += line;
      out += '\n';
      continue;
    }
    if (line.empty()) {
      pending_blank = !out.empty();
      continue;
    }
    if (run > 0) {
      fence_len = run;
      fence_char = c;
    } else if (std::size_t text_at = 0; int level = heading_level(line, &text_at)) {
      // No heading may sit more than one level below the one before it ("#" then "####" is a
      // hole the chunker's breadcrumbs would show); the first heading keeps its level.
      if (prev_level > 0 && level > prev_level + 1) level = prev_level + 1;
      line = std::string(static_cast<std::size_t>(level), '#') + line.substr(text_at);
      prev_level = level;
    }
    if (pending_blank) out += '\n';
    pending_blank = false;
    out += line;
    out += '\n';
  }
  // Blank lines at the end of an unclosed fence are all that can trail here.
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') {
    out.pop_back();
  }
  return out;
}

}  // namespace quarry::convert
