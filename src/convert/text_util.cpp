#include "convert/text_util.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/util.h"
#include "quarry/error.h"

namespace quarry::convert::detail {
namespace {

constexpr std::size_t kSniffBytes = 64 * 1024;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

// Number of bytes in `s` that belong to no valid UTF-8 sequence. A sequence cut by the end of
// `s` is not counted: the caller may pass a prefix of a longer text.
std::size_t count_invalid_utf8(std::string_view s) {
  std::size_t bad = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    std::uint32_t min = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      ++bad, ++i;
      continue;
    }
    if (i + len > s.size()) break;
    bool ok = true;
    for (std::size_t k = 1; k < len && ok; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    ok = ok && cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok) {
      i += len;
    } else {
      ++bad, ++i;
    }
  }
  return bad;
}

// UTF-16 (after its BOM) -> UTF-8; unpaired surrogates and an odd last byte become U+FFFD.
std::string utf16_to_utf8(std::string_view s, bool little_endian) {
  std::string out;
  out.reserve(s.size());
  auto unit = [&](std::size_t i) -> std::uint32_t {
    auto a = static_cast<unsigned char>(s[i]);
    auto b = static_cast<unsigned char>(s[i + 1]);
    return little_endian ? (a | (b << 8)) : ((a << 8) | b);
  };
  std::size_t i = 0;
  for (; i + 1 < s.size(); i += 2) {
    std::uint32_t u = unit(i);
    if (u >= 0xD800 && u <= 0xDBFF && i + 3 < s.size()) {
      std::uint32_t lo = unit(i + 2);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        core::append_utf8(out, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
        i += 2;
        continue;
      }
    }
    core::append_utf8(out, (u >= 0xD800 && u <= 0xDFFF) ? 0xFFFD : u);
  }
  if (i < s.size()) core::append_utf8(out, 0xFFFD);
  return out;
}

}  // namespace

bool looks_binary(std::string_view bytes) {
  if (std::memchr(bytes.data(), 0, bytes.size()) != nullptr) return true;
  std::string_view sample = bytes.substr(0, kSniffBytes);
  if (sample.empty()) return false;
  std::size_t controls = 0;
  for (char ch : sample) {
    auto c = static_cast<unsigned char>(ch);
    // Tab, newlines, form feed, vertical tab and ESC (ANSI colours in logs) are normal in text.
    bool allowed = c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == 0x1B;
    if ((c < 0x20 && !allowed) || c == 0x7F) ++controls;
  }
  if (controls * 10 > sample.size()) return true;
  return count_invalid_utf8(sample) * 4 > sample.size();
}

std::string decode_text(std::string_view bytes, std::string_view format,
                        std::vector<std::string>* warnings) {
  auto starts = [&](std::string_view p) { return bytes.substr(0, p.size()) == p; };
  std::string text;
  if (starts("\xFF\xFE") || starts("\xFE\xFF")) {
    text = utf16_to_utf8(bytes.substr(2), starts("\xFF\xFE"));
    if (warnings) warnings->push_back("transcoded from UTF-16");
  } else {
    if (starts("\xEF\xBB\xBF")) bytes.remove_prefix(3);
    text.assign(bytes);
  }
  if (looks_binary(text)) {
    throw Error(
        Code::corrupt_input,
        "file looks binary, not " + std::string(format) + " text: check the file or its extension",
        {{"format", std::string(format)}});
  }
  if (!core::is_valid_utf8(text)) {
    text = core::repair_utf8(text);
    if (warnings) warnings->push_back("invalid UTF-8 replaced with U+FFFD");
  }
  return text;
}

std::string collapse_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  for (char c : s) {
    if (is_space(c) || c == '\v') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

std::string tidy_title(std::string_view s, std::size_t max_bytes) {
  std::string t = collapse_whitespace(s);
  if (t.size() <= max_bytes) return t;
  std::size_t cut = max_bytes;
  // Back up to the start of a UTF-8 sequence so the cut never splits a character.
  while (cut > 0 && (static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) --cut;
  t.resize(cut);
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t;
}

std::string first_heading(std::string_view md) {
  bool in_fence = false;
  std::size_t pos = 0;
  while (pos < md.size()) {
    std::size_t end = md.find('\n', pos);
    if (end == std::string_view::npos) end = md.size();
    std::string_view line = md.substr(pos, end - pos);
    pos = end + 1;
    std::size_t lead = line.find_first_not_of(' ');
    if (lead == std::string_view::npos || lead > 3) continue;
    line.remove_prefix(lead);
    if (line.starts_with("```") || line.starts_with("~~~")) {
      in_fence = !in_fence;
      continue;
    }
    if (in_fence || !line.starts_with('#')) continue;
    std::size_t hashes = line.find_first_not_of('#');
    if (hashes == std::string_view::npos) hashes = line.size();
    if (hashes > 6 || (hashes < line.size() && line[hashes] != ' ' && line[hashes] != '\t')) {
      continue;
    }
    std::string title = tidy_title(line.substr(hashes));
    // A closing sequence ("# Title #") is not part of the text.
    while (!title.empty() && title.back() == '#') title.pop_back();
    while (!title.empty() && title.back() == ' ') title.pop_back();
    if (!title.empty()) return title;
  }
  return "";
}

std::string code_fence_for(std::string_view code) {
  std::size_t longest = 0;
  std::size_t run = 0;
  for (char c : code) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<std::size_t>(3, longest + 1), '`');
}

std::string escape_table_cell(std::string_view cell) {
  std::string out;
  out.reserve(cell.size());
  for (char c : cell) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return collapse_whitespace(out);
}

std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return "";
  std::size_t cols = 1;
  for (const auto& r : rows) cols = std::max(cols, r.size());
  std::string out;
  auto emit_row = [&](const std::vector<std::string>* r) {
    out += '|';
    for (std::size_t c = 0; c < cols; ++c) {
      std::string cell = (r && c < r->size()) ? escape_table_cell((*r)[c]) : std::string();
      out += ' ';
      out += cell.empty() ? "" : cell + " ";
      out += '|';
    }
    out += '\n';
  };
  emit_row(&rows[0]);
  out += '|';
  for (std::size_t c = 0; c < cols; ++c) out += " --- |";
  out += '\n';
  for (std::size_t i = 1; i < rows.size(); ++i) emit_row(&rows[i]);
  out.pop_back();
  return out;
}

std::string escape_heading_marker(std::string_view line) {
  std::size_t lead = line.find_first_not_of(" \t");
  if (lead == std::string_view::npos || line[lead] != '#') return std::string(line);
  std::string out(line.substr(0, lead));
  out += '\\';
  out += line.substr(lead);
  return out;
}

}  // namespace quarry::convert::detail
