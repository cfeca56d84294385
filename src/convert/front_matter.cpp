// The YAML front-matter block of kb/<name>/docs/<id>.md. Every value is written as a YAML
// double-quoted scalar with escapes, so any filename or title (quotes, backslashes, newlines,
// "---", ": ", leading '#') reads back byte for byte and the block stays valid YAML.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "convert/converter.h"
#include "core/util.h"

namespace quarry::convert {
namespace {

// YAML text must be valid UTF-8, so invalid bytes are replaced with U+FFFD first (the only
// lossy case). Characters YAML calls non-printable, or that it reads as line breaks, are escaped.
std::string quote(std::string_view raw) {
  std::string s = core::is_valid_utf8(raw) ? std::string(raw) : core::repair_utf8(raw);
  std::string out = "\"";
  char buf[16];
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else if (c == 0xC2 && static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      // C1 controls (including NEL, a YAML line break).
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned char>(s[i + 1]));
      out += buf;
      ++i;
    } else if (s.compare(i, 3, "\xE2\x80\xA8") == 0 || s.compare(i, 3, "\xE2\x80\xA9") == 0 ||
               s.compare(i, 3, "\xEF\xBB\xBF") == 0) {
      // U+2028/U+2029 are line breaks to YAML 1.1; U+FEFF is a byte-order mark to it.
      std::uint32_t cp = s[i] == '\xEF' ? 0xFEFF : (s[i + 2] == '\xA8' ? 0x2028 : 0x2029);
      std::snprintf(buf, sizeof buf, "\\u%04X", cp);
      out += buf;
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads `digits` hex digits at s[i..]; false if any is not hex.
bool read_hex(std::string_view s, std::size_t i, std::size_t digits, std::uint32_t* cp) {
  if (i + digits > s.size()) return false;
  *cp = 0;
  for (std::size_t k = 0; k < digits; ++k) {
    int v = hex_value(s[i + k]);
    if (v < 0) return false;
    *cp = (*cp << 4) | static_cast<std::uint32_t>(v);
  }
  return true;
}

std::string unquote_double(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    char e = s[++i];
    std::uint32_t cp = 0;
    std::size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (digits > 0) {
      if (read_hex(s, i + 1, digits, &cp)) {
        core::append_utf8(out, cp);
        i += digits;
      } else {
        out += '\\';
        out += e;
      }
      continue;
    }
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case '0':
        out += '\0';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'e':
        out += '\x1B';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case ' ':
        out += ' ';
        break;
      case '/':
        out += '/';
        break;
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      default:
        out += '\\', out += e;
        break;
    }
  }
  return out;
}

std::string_view trim(std::string_view s) {
  std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  std::size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// A scalar as this module writes it (double-quoted) or as a person might edit it (single-quoted
// or plain).
std::string parse_scalar(std::string_view v) {
  v = trim(v);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
    return unquote_double(v.substr(1, v.size() - 2));
  }
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') {
    std::string out;
    std::string_view in = v.substr(1, v.size() - 2);
    for (std::size_t i = 0; i < in.size(); ++i) {
      out += in[i];
      if (in[i] == '\'' && i + 1 < in.size() && in[i + 1] == '\'') ++i;
    }
    return out;
  }
  return std::string(v);
}

bool is_key(std::string_view k) {
  if (k.empty()) return false;
  for (char c : k) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string render_front_matter(const FrontMatter& fm) {
  std::string out = "---\n";
  out += "id: " + quote(fm.id) + "\n";
  out += "filename: " + quote(fm.filename) + "\n";
  out += "source_sha256: " + quote(fm.source_sha256) + "\n";
  out += "converter: " + quote(fm.converter) + "\n";
  out += "ingested_at: " + quote(fm.ingested_at) + "\n";
  out += "title: " + quote(fm.title) + "\n";
  out += "---\n\n";
  return out;
}

ParsedFile parse_front_matter(std::string_view file) {
  ParsedFile parsed;
  if (!file.starts_with("---\n")) return parsed;
  FrontMatter fm;
  std::size_t pos = 4;
  while (pos < file.size()) {
    std::size_t end = file.find('\n', pos);
    std::size_t next = end == std::string_view::npos ? file.size() : end + 1;
    std::string_view line = file.substr(pos, next - pos);
    if (line.ends_with('\n')) line.remove_suffix(1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    pos = next;
    if (line == "---") {
      // The body starts after the blank line that follows the block, when there is one.
      if (pos < file.size() && file[pos] == '\n')
        ++pos;
      else if (file.substr(pos, 2) == "\r\n")
        pos += 2;
      parsed.front = std::move(fm);
      parsed.body_offset = pos;
      return parsed;
    }
    if (trim(line).empty() || trim(line).starts_with('#')) continue;
    std::size_t colon = line.find(':');
    // Anything but "key: value" means this was a thematic break, not front matter.
    if (colon == std::string_view::npos || !is_key(line.substr(0, colon))) return ParsedFile{};
    std::string_view key = line.substr(0, colon);
    std::string value = parse_scalar(line.substr(colon + 1));
    if (key == "id")
      fm.id = std::move(value);
    else if (key == "filename")
      fm.filename = std::move(value);
    else if (key == "source_sha256")
      fm.source_sha256 = std::move(value);
    else if (key == "converter")
      fm.converter = std::move(value);
    else if (key == "ingested_at")
      fm.ingested_at = std::move(value);
    else if (key == "title")
      fm.title = std::move(value);
  }
  return ParsedFile{};  // no closing "---": not front matter
}

}  // namespace quarry::convert
