// BERT's normaliser and pre-tokenizer (see wordpiece.h for the scope of the Unicode tables).
#include <algorithm>
#include <cstdint>

#include "core/util.h"
#include "embed/static/wordpiece.h"

namespace quarry::embed {
namespace {

struct Range {
  char32_t lo, hi;
};

bool in(const Range* r, std::size_t n, char32_t c) {
  // Tables are sorted; binary search keeps the non-ASCII path cheap.
  const Range* end = r + n;
  const Range* it =
      std::upper_bound(r, end, c, [](char32_t v, const Range& x) { return v < x.lo; });
  return it != r && c <= (it - 1)->hi;
}

constexpr Range kPunct[] = {
    {0x00A1, 0x00A1}, {0x00A7, 0x00A7}, {0x00AB, 0x00AB}, {0x00B6, 0x00B7}, {0x00BB, 0x00BB},
    {0x00BF, 0x00BF}, {0x037E, 0x037E}, {0x0387, 0x0387}, {0x055A, 0x055F}, {0x0589, 0x058A},
    {0x05BE, 0x05BE}, {0x05C0, 0x05C0}, {0x05C3, 0x05C3}, {0x05C6, 0x05C6}, {0x05F3, 0x05F4},
    {0x0609, 0x060D}, {0x061B, 0x061B}, {0x061E, 0x061F}, {0x066A, 0x066D}, {0x06D4, 0x06D4},
    {0x0964, 0x0965}, {0x0E4F, 0x0E4F}, {0x0E5A, 0x0E5B}, {0x2010, 0x2027}, {0x2030, 0x2043},
    {0x2045, 0x2051}, {0x2053, 0x205E}, {0x207D, 0x207E}, {0x208D, 0x208E}, {0x2308, 0x230B},
    {0x2329, 0x232A}, {0x2768, 0x2775}, {0x27C5, 0x27C6}, {0x27E6, 0x27EF}, {0x2983, 0x2998},
    {0x29D8, 0x29DB}, {0x29FC, 0x29FD}, {0x2CF9, 0x2CFC}, {0x2CFE, 0x2CFF}, {0x2E00, 0x2E4F},
    {0x3001, 0x3003}, {0x3008, 0x3011}, {0x3014, 0x301F}, {0x3030, 0x3030}, {0x303D, 0x303D},
    {0x30A0, 0x30A0}, {0x30FB, 0x30FB}, {0xFE10, 0xFE19}, {0xFE30, 0xFE52}, {0xFE54, 0xFE61},
    {0xFE63, 0xFE63}, {0xFE68, 0xFE68}, {0xFE6A, 0xFE6B}, {0xFF01, 0xFF03}, {0xFF05, 0xFF0A},
    {0xFF0C, 0xFF0F}, {0xFF1A, 0xFF1B}, {0xFF1F, 0xFF20}, {0xFF3B, 0xFF3D}, {0xFF3F, 0xFF3F},
    {0xFF5B, 0xFF5B}, {0xFF5D, 0xFF5D}, {0xFF5F, 0xFF65}};

// BERT's _is_chinese_char: the CJK Unified Ideographs blocks (not Hangul, not kana).
constexpr Range kCjk[] = {{0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xF900, 0xFAFF},
                          {0x20000, 0x2A6DF}, {0x2A700, 0x2B73F}, {0x2B740, 0x2B81F},
                          {0x2B820, 0x2CEAF}, {0x2F800, 0x2FA1F}};

// Format characters (Cf) and other invisible controls that clean_text drops.
constexpr Range kFormat[] = {{0x00AD, 0x00AD}, {0x0600, 0x0605}, {0x061C, 0x061C},
                             {0x06DD, 0x06DD}, {0x070F, 0x070F}, {0x180E, 0x180E},
                             {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x2064},
                             {0x2066, 0x206F}, {0xFEFF, 0xFEFF}, {0xFFF9, 0xFFFB}};

// Combining marks (Mn) removed by strip_accents after decomposition.
constexpr Range kMarks[] = {{0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x1AB0, 0x1AFF},
                            {0x1DC0, 0x1DFF}, {0x20D0, 0x20FF}, {0xFE20, 0xFE2F}};

// Base letter of each precomposed letter U+00C0..U+017F ('.' = no canonical decomposition).
constexpr std::string_view kLatinBase =
    "AAAAAA.CEEEEIIII.NOOOOO..UUUUY..aaaaaa.ceeeeiiii.nooooo..uuuuy.y"
    "AaAaAaCcCcCcCcDd..EeEeEeEeEeGgGgGgGgHh..IiIiIiIiI...JjKk.LlLlLl."
    "...NnNnNn...OoOoOo..RrRrRrSsSsSsSsTtTt..UuUuUuUuUuUuWwYyYZzZzZz.";
static_assert(kLatinBase.size() == 0x180 - 0xC0);

bool is_whitespace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x00A0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

bool is_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || in(kFormat, std::size(kFormat), c) ||
         (c >= 0xE000 && c <= 0xF8FF);  // private use (Co)
}

bool is_punct(char32_t c) {
  if (c < 0x80)
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  return in(kPunct, std::size(kPunct), c);
}

char32_t to_lower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
  if (c == 0x130) return 'i';
  if (c >= 0x100 && c <= 0x137) return (c % 2 == 0) ? c + 1 : c;
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c % 2 == 1) ? c + 1 : c;
  if (c >= 0x14A && c <= 0x177) return (c % 2 == 0) ? c + 1 : c;
  if (c == 0x178) return 0xFF;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

char32_t strip_accent(char32_t c) {
  if (c >= 0xC0 && c <= 0x17F) {
    char b = kLatinBase[c - 0xC0];
    if (b != '.') return static_cast<char32_t>(b);
  }
  return c;
}

// Decodes one UTF-8 sequence at s[i]; invalid bytes yield U+FFFD and advance by one.
char32_t next_cp(std::string_view s, std::size_t& i) {
  auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    ++i;
    return b;
  }
  int len = (b >= 0xF0 && b < 0xF5) ? 4 : (b >= 0xE0) ? 3 : (b >= 0xC2 && b < 0xE0) ? 2 : 0;
  if (len == 0 || b >= 0xF5 || i + len > s.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t c = b & (0xFF >> (len + 1));
  for (int k = 1; k < len; ++k) {
    auto cb = static_cast<unsigned char>(s[i + k]);
    if ((cb & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    c = (c << 6) | (cb & 0x3F);
  }
  // Overlong forms and surrogates are invalid UTF-8.
  if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
      (c >= 0xD800 && c <= 0xDFFF)) {
    ++i;
    return 0xFFFD;
  }
  i += len;
  return c;
}

}  // namespace

void bert_pre_tokenize(std::string_view text, const BertNormalizerOptions& opt, std::string& word,
                       const std::function<void(std::string_view)>& emit) {
  word.clear();
  auto flush = [&] {
    if (!word.empty()) emit(word);
    word.clear();
  };
  std::string single;
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = next_cp(text, i);
    if (opt.clean_text && (c == 0 || c == 0xFFFD || is_control(c))) continue;
    if (is_whitespace(c)) {
      flush();
      continue;
    }
    if (opt.strip_accents) {
      if (c >= 0x300 && in(kMarks, std::size(kMarks), c)) continue;
      c = strip_accent(c);
    }
    if (opt.lowercase) c = to_lower(c);
    if (is_punct(c) || (opt.handle_chinese_chars && c >= 0x3400 && in(kCjk, std::size(kCjk), c))) {
      flush();
      single.clear();
      core::append_utf8(single, c);
      emit(single);
      continue;
    }
    core::append_utf8(word, c);
  }
  flush();
}

}  // namespace quarry::embed
