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
#include <utility>
#include <vector>

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

namespace {

using Src = std::pair<std::uint32_t, std::uint32_t>;  // where a character came from in the text

// The normaliser and pre-tokenizer, in one pass. With Track, every code point carries the byte
// range of the source character it came from, and `emit` gets, beside each pre-token, that
// range for each of its bytes (the chunker cuts windows at token spans of the original text).
template <bool Track, class Emit>
void pre_tokenize(std::string_view text, const BertNormalizerOptions& opt, std::string& word,
                  Emit&& emit) {
  // 1. clean_text and handle_chinese_chars, into code points.
  std::u32string cps;
  cps.reserve(text.size());
  std::vector<Src> srcs;  // Track: srcs[k] for cps[k]
  auto push = [&](char32_t c, Src s) {
    cps.push_back(c);
    if constexpr (Track) srcs.push_back(s);
  };
  bool ascii = true;
  for (std::size_t i = 0; i < text.size();) {
    const auto at = static_cast<std::uint32_t>(i);
    char32_t c = next_cp(text, i);
    const Src s{at, static_cast<std::uint32_t>(i)};
    if (opt.clean_text) {
      if (c == 0 || c == 0xFFFD || is_control(c)) continue;
      if (is_whitespace(c)) c = ' ';
    }
    if (c >= 0x80) ascii = false;
    if (opt.handle_chinese_chars && c >= 0x3400 && is_cjk(c)) {
      push(' ', s);
      push(c, s);
      push(' ', s);
      continue;
    }
    push(c, s);
  }
  // 2. strip_accents: NFD, then no non-spacing marks. 3. lowercase. (ASCII needs neither NFD
  // nor ICU.)
  if (!ascii && opt.strip_accents) {
    std::u32string out;
    std::vector<Src> out_srcs;
    out.reserve(cps.size());
    // NFD of the whole text is the NFD of each stretch between normalisation boundaries, so
    // with Track each stretch (a character and the marks that follow it) is one source range.
    std::size_t k = 0;
    while (k < cps.size()) {
      std::size_t e = cps.size();
      if constexpr (Track) {
        e = k + 1;
        while (e < cps.size() && !nfd().hasBoundaryBefore(static_cast<UChar32>(cps[e]))) ++e;
      }
      if (Track && e == k + 1 && (cps[k] < 0x80 || nfd().isInert(static_cast<UChar32>(cps[k])))) {
        if (u_charType(static_cast<UChar32>(cps[k])) != U_NON_SPACING_MARK) {
          out.push_back(cps[k]);
          if constexpr (Track) out_srcs.push_back(srcs[k]);
        }
        k = e;
        continue;
      }
      icu::UnicodeString u;
      for (std::size_t j = k; j < e; ++j) u.append(static_cast<UChar32>(cps[j]));
      UErrorCode err = U_ZERO_ERROR;
      icu::UnicodeString d = nfd().normalize(u, err);
      if (U_FAILURE(err)) throw Error(Code::internal, "ICU NFD failed");
      for (int32_t q = 0; q < d.length();) {
        const UChar32 c = d.char32At(q);
        q += U16_LENGTH(c);
        if (u_charType(c) == U_NON_SPACING_MARK) continue;
        out.push_back(static_cast<char32_t>(c));
        if constexpr (Track) out_srcs.emplace_back(srcs[k].first, srcs[e - 1].second);
      }
      k = e;
    }
    cps = std::move(out);
    if constexpr (Track) srcs = std::move(out_srcs);
  }
  // 4. Pre-tokenize, lowercasing on the way.
  std::vector<Src> word_srcs;  // Track: per byte of `word`
  auto append = [&](std::string& to, std::vector<Src>& to_srcs, char32_t c, std::size_t k) {
    const std::size_t before = to.size();
    core::append_utf8(to, c);
    if constexpr (Track) to_srcs.insert(to_srcs.end(), to.size() - before, srcs[k]);
  };
  auto emit_word = [&](const std::string& w, const std::vector<Src>& w_srcs) {
    if constexpr (Track)
      emit(std::string_view(w), w_srcs.data());
    else
      emit(std::string_view(w));
  };
  word.clear();
  auto flush = [&] {
    if (!word.empty()) emit_word(word, word_srcs);
    word.clear();
    word_srcs.clear();
  };
  std::string single;
  std::vector<Src> single_srcs;
  for (std::size_t k = 0; k < cps.size(); ++k) {
    char32_t c = cps[k];
    if (opt.lowercase) {
      if (c < 0x80) {
        if (c >= 'A' && c <= 'Z') c += 32;
      } else if (c == 0x130) {  // the one character whose lowercase is two: i + dot above
        append(word, word_srcs, 'i', k);
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
      single_srcs.clear();
      append(single, single_srcs, c, k);
      emit_word(single, single_srcs);
      continue;
    }
    append(word, word_srcs, c, k);
  }
  flush();
}

}  // namespace

void bert_pre_tokenize(std::string_view text, const BertNormalizerOptions& opt, std::string& word,
                       const std::function<void(std::string_view)>& emit) {
  pre_tokenize<false>(text, opt, word, emit);
}

void bert_pre_tokenize_spans(
    std::string_view text, const BertNormalizerOptions& opt,
    const std::function<void(std::string_view, const std::pair<std::uint32_t, std::uint32_t>*)>&
        emit) {
  std::string word;
  pre_tokenize<true>(text, opt, word, emit);
}

}  // namespace quarry::embed
