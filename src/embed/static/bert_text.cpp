// BERT's normaliser and pre-tokenizer exactly as Hugging Face's tokenizers implements them
// (BertNormalizer, then BertPreTokenizer), with ICU's Unicode data:
//   clean_text: drop NUL, U+FFFD and every control, format, private-use or surrogate character
//     (Cc, Cf, Co, Cs; unassigned ones stay) except \t \n \r; white space becomes ' ';
//   handle_chinese_chars: a space either side of each CJK ideograph;
//   strip_accents (null: follows lowercase): NFD, then drop non-spacing marks (Mn);
//   lowercase: each character's full lowercase mapping (no context: Σ is always σ);
//   pre-tokenize: split on White_Space (removed) and on punctuation (ASCII or P*, isolated).
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <cstdint>

#include "core/util.h"
#include "embed/static/wordpiece.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace {

bool is_whitespace(char32_t c) {
  return c == '\t' || c == '\n' || c == '\r' ||
         u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE);
}

bool is_other(char32_t c) {
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_PRIVATE_USE_CHAR:
    case U_SURROGATE:
      return true;
    default:
      return false;
  }
}

bool is_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return is_other(c);
}

bool is_punct(char32_t c) {
  if (c < 0x80)
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) != 0;
}

bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
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
  if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
      (c >= 0xD800 && c <= 0xDFFF)) {
    ++i;
    return 0xFFFD;
  }
  i += len;
  return c;
}

const icu::Normalizer2& nfd() {
  static const icu::Normalizer2* n = [] {
    UErrorCode err = U_ZERO_ERROR;
    const icu::Normalizer2* p = icu::Normalizer2::getNFDInstance(err);
    if (U_FAILURE(err) || !p)
      throw Error(Code::internal, std::string("ICU's NFD data is missing: ") + u_errorName(err));
    return p;
  }();
  return *n;
}

}  // namespace

void bert_pre_tokenize(std::string_view text, const BertNormalizerOptions& opt, std::string& word,
                       const std::function<void(std::string_view)>& emit) {
  // 1. clean_text and handle_chinese_chars, into code points.
  std::u32string cps;
  cps.reserve(text.size());
  bool ascii = true;
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = next_cp(text, i);
    if (opt.clean_text) {
      if (c == 0 || c == 0xFFFD || is_control(c)) continue;
      if (is_whitespace(c)) c = ' ';
    }
    if (c >= 0x80) ascii = false;
    if (opt.handle_chinese_chars && c >= 0x3400 && is_cjk(c)) {
      cps.push_back(' ');
      cps.push_back(c);
      cps.push_back(' ');
      continue;
    }
    cps.push_back(c);
  }
  // 2. strip_accents: NFD, then no non-spacing marks. 3. lowercase. (ASCII needs neither NFD
  // nor ICU.)
  if (!ascii && opt.strip_accents) {
    icu::UnicodeString u;
    for (char32_t c : cps) u.append(static_cast<UChar32>(c));
    UErrorCode err = U_ZERO_ERROR;
    icu::UnicodeString d = nfd().normalize(u, err);
    if (U_FAILURE(err)) throw Error(Code::internal, "ICU NFD failed");
    cps.clear();
    for (int32_t k = 0; k < d.length();) {
      const UChar32 c = d.char32At(k);
      k += U16_LENGTH(c);
      if (u_charType(c) != U_NON_SPACING_MARK) cps.push_back(static_cast<char32_t>(c));
    }
  }
  // 4. Pre-tokenize, lowercasing on the way.
  word.clear();
  auto flush = [&] {
    if (!word.empty()) emit(word);
    word.clear();
  };
  std::string single;
  for (char32_t c : cps) {
    if (opt.lowercase) {
      if (c < 0x80) {
        if (c >= 'A' && c <= 'Z') c += 32;
      } else if (c == 0x130) {  // the one character whose lowercase is two: i + dot above
        core::append_utf8(word, 'i');
        c = 0x307;
      } else {
        c = static_cast<char32_t>(u_tolower(static_cast<UChar32>(c)));
      }
    }
    if (is_whitespace(c)) {
      flush();
      continue;
    }
    if (is_punct(c)) {
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
