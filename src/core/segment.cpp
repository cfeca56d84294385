#include "core/segment.h"

#include <unicode/brkiter.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utext.h>

#include <memory>
#include <stdexcept>

namespace quarry::core {
namespace {

const icu::Normalizer2& nfkc_cf() {
  static const icu::Normalizer2* n = [] {
    UErrorCode st = U_ZERO_ERROR;
    const icu::Normalizer2* p = icu::Normalizer2::getNFKCCasefoldInstance(st);
    if (U_FAILURE(st) || !p) throw std::runtime_error("ICU: no nfkc_cf normalizer");
    return p;
  }();
  return *n;
}

// Han, Kana and Hangul: the scripts bigrams serve (Lucene's CJK set).
bool is_cjk(char32_t c) {
  return (c >= 0x1100 && c <= 0x11FF) || (c >= 0x2E80 && c <= 0x2FDF) ||
         (c >= 0x3005 && c <= 0x3007) || (c >= 0x3021 && c <= 0x3029) ||
         (c >= 0x3031 && c <= 0x3035) || (c >= 0x3038 && c <= 0x303B) ||
         (c >= 0x3040 && c <= 0x30FF) || (c >= 0x3130 && c <= 0x318F) ||
         (c >= 0x31F0 && c <= 0x31FF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA960 && c <= 0xA97F) ||
         (c >= 0xAC00 && c <= 0xD7FF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFF66 && c <= 0xFFDC) || (c >= 0x20000 && c <= 0x323AF);
}

}  // namespace

// Thai, Lao, Myanmar, Khmer: letters that combine, cut by ICU's dictionaries in every mode.
bool is_southeast_asian(char32_t c) {
  return (c >= 0x0E00 && c <= 0x0EFF) || (c >= 0x1000 && c <= 0x109F) ||
         (c >= 0x1780 && c <= 0x17FF) || (c >= 0x19E0 && c <= 0x19FF) ||
         (c >= 0xA9E0 && c <= 0xA9FF) || (c >= 0xAA60 && c <= 0xAA7F);
}

namespace {

bool is_mark(char32_t c) {
  const auto t = u_charType(static_cast<UChar32>(c));
  return t == U_NON_SPACING_MARK || t == U_COMBINING_SPACING_MARK || t == U_ENCLOSING_MARK;
}

// Decodes strictly: a malformed or truncated sequence, an overlong form or a surrogate is one
// byte of U+FFFD.
char32_t decode_checked(std::string_view t, std::size_t i, std::size_t* len) {
  const auto b0 = static_cast<unsigned char>(t[i]);
  *len = 1;
  if (b0 < 0x80) return b0;
  std::size_t n = b0 >= 0xF0 && b0 <= 0xF4 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 && b0 < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > t.size()) return 0xFFFD;
  char32_t c = b0 & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(t[i + k]);
    if ((b & 0xC0) != 0x80) return 0xFFFD;
    c = (c << 6) | (b & 0x3F);
  }
  if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
      (c >= 0xD800 && c <= 0xDFFF))
    return 0xFFFD;
  *len = n;
  return c;
}

// The word-break iterator of this thread (ICU iterators are not thread-safe; making one costs
// far more than a run's segmentation).
icu::BreakIterator& word_breaker() {
  thread_local std::unique_ptr<icu::BreakIterator> it = [] {
    UErrorCode st = U_ZERO_ERROR;
    std::unique_ptr<icu::BreakIterator> b(
        icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), st));
    if (U_FAILURE(st) || !b) throw std::runtime_error("ICU: no word break iterator");
    return b;
  }();
  return *it;
}

void icu_words(std::string_view run, const std::function<void(std::size_t, std::size_t)>& fn) {
  UErrorCode st = U_ZERO_ERROR;
  UText ut = UTEXT_INITIALIZER;
  utext_openUTF8(&ut, run.data(), static_cast<int64_t>(run.size()), &st);
  if (U_FAILURE(st)) return;
  icu::BreakIterator& bi = word_breaker();
  bi.setText(&ut, st);
  if (U_FAILURE(st)) {
    utext_close(&ut);
    return;
  }
  // UTF-8 UText indexes are byte offsets.
  int32_t start = bi.first();
  for (int32_t end = bi.next(); end != icu::BreakIterator::DONE; start = end, end = bi.next())
    if (bi.getRuleStatus() != UBRK_WORD_NONE)
      fn(static_cast<std::size_t>(start), static_cast<std::size_t>(end));
  utext_close(&ut);
}

void bigrams(std::string_view run, std::size_t base,
             const std::function<void(std::size_t, std::size_t)>& fn) {
  std::vector<std::size_t> at;  // each character's start, then the end
  for (std::size_t i = 0, len = 1; i < run.size(); i += len) {
    at.push_back(i);
    decode_checked(run, i, &len);
  }
  at.push_back(run.size());
  const std::size_t n = at.size() - 1;
  if (n == 1) fn(base, base + run.size());
  for (std::size_t k = 0; k + 1 < n; ++k) fn(base + at[k], base + at[k + 2]);
}

}  // namespace

Segmenter segmenter_from_name(std::string_view name) {
  if (name == "icu") return Segmenter::icu;
  if (name == "bigram") return Segmenter::bigram;
  throw std::invalid_argument("segmenter must be icu or bigram, not '" + std::string(name) + "'");
}

const char* segmenter_name(Segmenter s) {
  return s == Segmenter::bigram ? "bigram" : "icu";
}

std::pair<std::size_t, std::size_t> Folded::original(std::size_t from, std::size_t to) const {
  if (from >= text.size()) return {source.back(), source.back()};
  // `to` inside a chunk (one character folded to several) extends to the chunk's end.
  std::size_t k = to;
  while (k < text.size() && k > from && source[k] == source[k - 1]) ++k;
  return {source[from], source[k]};
}

Folded fold(std::string_view text) {
  Folded f;
  bool ascii = true;
  for (char c : text)
    if (static_cast<unsigned char>(c) >= 0x80) {
      ascii = false;
      break;
    }
  if (ascii) {
    f.text.assign(text);
    f.source.resize(text.size() + 1);
    for (std::size_t i = 0; i <= text.size(); ++i) f.source[i] = static_cast<std::uint32_t>(i);
    return f;
  }
  const icu::Normalizer2& norm = nfkc_cf();
  f.text.reserve(text.size());
  f.source.reserve(text.size() + 1);
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t len = 1;
    const char32_t c = decode_checked(text, i, &len);
    if (c < 0x80) {  // ASCII: as it is (the word tokenizer lowercases it)...
      std::size_t l2 = 1;
      const char32_t next = i + 1 < text.size() ? decode_checked(text, i + 1, &l2) : 0;
      if (next < 0x80 || norm.hasBoundaryBefore(static_cast<UChar32>(next))) {
        f.text += static_cast<char>(c);
        f.source.push_back(static_cast<std::uint32_t>(i));
        ++i;
        continue;
      }
    }  // ...unless a combining mark follows: "e" + U+0301 composes to "é"
    // One normalisation chunk: this code point and those that may combine with it.
    std::size_t j = i + len;
    icu::UnicodeString chunk;
    chunk.append(static_cast<UChar32>(c));
    bool inert = norm.isInert(static_cast<UChar32>(c)) && c != 0xFFFD;
    while (j < text.size()) {
      std::size_t l2 = 1;
      const char32_t d = decode_checked(text, j, &l2);
      if (d < 0x80 || norm.hasBoundaryBefore(static_cast<UChar32>(d))) break;
      chunk.append(static_cast<UChar32>(d));
      inert = false;
      j += l2;
    }
    if (inert) {
      f.text.append(text.substr(i, len));
    } else {
      UErrorCode st = U_ZERO_ERROR;
      icu::UnicodeString out = norm.normalize(chunk, st);
      if (U_FAILURE(st)) out = chunk;
      std::string utf8;
      out.toUTF8String(utf8);
      f.text += utf8;
    }
    f.source.resize(f.text.size(), static_cast<std::uint32_t>(i));
    i = j;
  }
  f.source.push_back(static_cast<std::uint32_t>(text.size()));
  return f;
}

std::string fold_text(std::string_view text) {
  return fold(text).text;
}

bool is_unspaced(char32_t cp) {
  return is_cjk(cp) || is_southeast_asian(cp);
}

char32_t decode_utf8(std::string_view t, std::size_t i, std::size_t* len) {
  return decode_checked(t, i, len);
}

void script_runs(std::string_view text,
                 const std::function<void(std::size_t, std::size_t, bool)>& fn) {
  std::size_t run_start = 0;
  bool run_unspaced = false;
  for (std::size_t i = 0, len = 1; i < text.size(); i += len) {
    const char32_t c = decode_checked(text, i, &len);
    bool u = c >= 0x80 && is_unspaced(c);
    if (!u && run_unspaced && c >= 0x80 && is_mark(c)) u = true;  // a mark continues its run
    if (i == 0) {
      run_unspaced = u;
    } else if (u != run_unspaced) {
      fn(run_start, i, run_unspaced);
      run_start = i;
      run_unspaced = u;
    }
  }
  if (!text.empty()) fn(run_start, text.size(), run_unspaced);
}

void segment_run(std::string_view run, Segmenter s,
                 const std::function<void(std::size_t, std::size_t)>& fn) {
  if (s == Segmenter::icu) {
    icu_words(run, fn);
    return;
  }
  // Bigrams over Han, Kana and Hangul; the Southeast Asian scripts keep ICU's words.
  std::size_t start = 0;
  bool sea = false;
  auto flush = [&](std::size_t end) {
    if (end <= start) return;
    std::string_view part = run.substr(start, end - start);
    if (sea) {
      const std::size_t base = start;
      icu_words(part, [&](std::size_t b, std::size_t e) { fn(base + b, base + e); });
    } else {
      bigrams(part, start, fn);
    }
  };
  for (std::size_t i = 0, len = 1; i < run.size(); i += len) {
    const char32_t c = decode_checked(run, i, &len);
    const bool is_sea = is_southeast_asian(c) || (sea && !is_cjk(c));
    if (i == 0) {
      sea = is_sea;
    } else if (is_sea != sea) {
      flush(i);
      start = i;
      sea = is_sea;
    }
  }
  flush(run.size());
}

}  // namespace quarry::core
