// The default Tokenizer: a word-piece approximation of a BERT-style WordPiece tokenizer
// (docs/chunking.md, "The approximate tokenizer"). It runs over every ingested document, so it is
// one forward pass over the bytes with a table lookup for ASCII and no allocation beyond `out`.
// Version 2 (KBs whose chunking.segmenter is icu) differs in one rule: a run of Thai, Lao, Khmer
// or Myanmar, written without spaces, is cut into ICU's dictionary words before rule 3 counts
// each word; version 1 counted the whole run as one long word.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chunk/chunker.h"
#include "core/segment.h"

namespace quarry::chunk {

namespace {

// How a character takes part in tokens.
enum class Cls : std::uint8_t {
  space,   // separates tokens, never part of one (ASCII and Unicode white space)
  word,    // letters and digits: runs of them form words, which split into pieces
  single,  // punctuation, symbols, CJK ideographs, kana, emoji, invalid bytes: one token each
  joiner,  // combining marks, ZWJ, variation selectors, skin tones: extend the open token
};

// WordPiece vocabularies hold most short words whole and split rare long words into pieces of a
// few characters; 6 then 4 per piece errs on the high side for English and scientific text.
constexpr int kFirstPieceChars = 6;
constexpr int kNextPieceChars = 4;

constexpr std::array<Cls, 128> make_ascii_table() {
  std::array<Cls, 128> t{};
  for (int c = 0; c < 128; ++c) {
    bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
    // Control characters count as symbols so that no non-space byte is ever left outside a token.
    t[c] = alnum ? Cls::word : space ? Cls::space : Cls::single;
  }
  return t;
}
constexpr std::array<Cls, 128> kAscii = make_ascii_table();

bool in(char32_t cp, char32_t lo, char32_t hi) {
  return cp >= lo && cp <= hi;
}

Cls classify(char32_t cp) {
  if (cp == 0x85 || cp == 0xA0 || cp == 0x1680 || in(cp, 0x2000, 0x200B) || cp == 0x2028 ||
      cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0xFEFF)
    return Cls::space;
  if (in(cp, 0x0300, 0x036F) || in(cp, 0x1AB0, 0x1AFF) || in(cp, 0x1DC0, 0x1DFF) ||
      in(cp, 0x20D0, 0x20FF) || in(cp, 0xFE20, 0xFE2F) || in(cp, 0x200C, 0x200F) ||
      in(cp, 0x2060, 0x206F) || in(cp, 0xFE00, 0xFE0F) || in(cp, 0x1F3FB, 0x1F3FF) ||
      in(cp, 0xE0020, 0xE007F) || in(cp, 0xE0100, 0xE01EF))
    return Cls::joiner;
  // BERT's basic tokenizer isolates CJK ideographs; kana and symbols end up as single pieces too.
  if (in(cp, 0x3400, 0x4DBF) || in(cp, 0x4E00, 0x9FFF) || in(cp, 0xF900, 0xFAFF) ||
      in(cp, 0x20000, 0x2FA1F) || in(cp, 0x30000, 0x3134F) || in(cp, 0x3001, 0x30FF) ||
      in(cp, 0x31F0, 0x31FF))
    return Cls::single;
  if (in(cp, 0xA1, 0xBF) || cp == 0xD7 || cp == 0xF7 || in(cp, 0x2010, 0x2027) ||
      in(cp, 0x2030, 0x205E) || in(cp, 0x2070, 0x2BFF) || in(cp, 0x2E00, 0x2E7F) ||
      in(cp, 0xE000, 0xF8FF) || in(cp, 0xFE30, 0xFE6F) || in(cp, 0xFF01, 0xFF0F) ||
      in(cp, 0xFF1A, 0xFF20) || in(cp, 0xFF3B, 0xFF40) || in(cp, 0xFF5B, 0xFF65) ||
      in(cp, 0xFFF0, 0xFFFF) || in(cp, 0x1F000, 0x1FAFF))
    return Cls::single;
  return Cls::word;  // Latin-1 letters, Greek, Cyrillic, Arabic, Hebrew, Indic, Hangul, ...
}

// Decodes the code point at p[i] (p[i] >= 0x80) into cp. An invalid or truncated sequence yields
// length 1, cp 0 and a single-token class, so malformed input never splits inside a valid code
// point or crashes.
Cls classify_multibyte(const unsigned char* p, std::size_t n, std::size_t i, std::size_t& len,
                       char32_t& cp) {
  unsigned char b = p[i];
  std::size_t need = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b <= 0xDF ? 2 : 0;
  if (b >= 0xF5) need = 0;
  cp = 0;
  if (need == 0 || i + need > n) {
    len = 1;
    return Cls::single;
  }
  char32_t c = b & (need == 2 ? 0x1F : need == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < need; ++k) {
    if ((p[i + k] & 0xC0) != 0x80) {
      len = 1;
      return Cls::single;
    }
    c = (c << 6) | (p[i + k] & 0x3F);
  }
  len = need;
  cp = c;
  return classify(c);
}

// The open word piece: a word of n characters is cut into pieces of 6, then 4, 4, ... (rule 3).
struct WordPiece {
  std::size_t begin = 0;  // where the open token starts (a word piece, or a single's start)
  int chars = 0;          // characters in the open piece
  int limit = kFirstPieceChars;

  void start(std::size_t at) {
    begin = at;
    chars = 0;
    limit = kFirstPieceChars;
  }
  // The character at `at` joins the word; a full piece is emitted first.
  template <class Emit>
  void add(std::size_t at, Emit& emit) {
    if (chars == limit) {
      emit(begin, at);
      begin = at;
      chars = 0;
      limit = kNextPieceChars;
    }
    ++chars;
  }
};

// The end of the run of Thai, Lao, Khmer or Myanmar code points that starts at p[i].
std::size_t southeast_asian_run_end(const unsigned char* p, std::size_t n, std::size_t i) {
  while (i < n && p[i] >= 0x80) {
    std::size_t len = 1;
    char32_t cp = 0;
    classify_multibyte(p, n, i, len, cp);
    if (!core::is_southeast_asian(cp)) break;
    i += len;
  }
  return i;
}

// Version 2's rule for a run [b, e) of a Southeast Asian script: ICU's words, each cut into
// pieces of 6, then 4 code points like any word; a character outside every word (a sign such
// as ๆ or ฯ) is a token of its own.
template <class Emit>
void scan_southeast_asian(std::string_view text, std::size_t b, std::size_t e, Emit& emit) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  auto step = [&](std::size_t i) {
    std::size_t len = 1;
    char32_t cp = 0;
    classify_multibyte(p, e, i, len, cp);
    return len;
  };
  auto singles = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; i += step(i)) emit(i, i + step(i));
  };
  std::size_t at = b;
  core::segment_run(text.substr(b, e - b), core::Segmenter::icu,
                    [&](std::size_t wb, std::size_t we) {
                      wb += b;
                      we += b;
                      singles(at, wb);
                      WordPiece piece;
                      piece.start(wb);
                      for (std::size_t i = wb; i < we; i += step(i)) piece.add(i, emit);
                      emit(piece.begin, we);
                      at = we;
                    });
  singles(at, e);
}

// One pass over `text`, calling emit(begin, end) for every token in order. `words`: version 2
// (Southeast Asian runs cut into ICU's words).
template <class Emit>
void scan(std::string_view text, bool words, Emit&& emit) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  enum class Open { none, word, single } open = Open::none;
  WordPiece piece;
  auto close = [&](std::size_t at) {
    if (open != Open::none) emit(piece.begin, at);
    open = Open::none;
  };
  std::size_t i = 0;
  while (i < n) {
    std::size_t len = 1;
    char32_t cp = 0;
    Cls cls = p[i] < 0x80 ? kAscii[p[i]] : classify_multibyte(p, n, i, len, cp);
    if (words && cls == Cls::word && cp != 0 && core::is_southeast_asian(cp)) {
      close(i);
      const std::size_t e = southeast_asian_run_end(p, n, i);
      scan_southeast_asian(text, i, e, emit);
      i = e;
      continue;
    }
    switch (cls) {
      case Cls::space:
        close(i);
        break;
      case Cls::word:
        if (open != Open::word) {
          close(i);
          open = Open::word;
          piece.start(i);
        }
        piece.add(i, emit);  // a rare long word starts its next piece here
        // Most text is ASCII words: run through the rest of this one without the switch.
        while (i + len < n && p[i + len] < 0x80 && kAscii[p[i + len]] == Cls::word) {
          i += len;
          len = 1;
          piece.add(i, emit);
        }
        break;
      case Cls::single:
        close(i);
        open = Open::single;
        piece.begin = i;
        break;
      case Cls::joiner:
        if (open == Open::none) {  // a stray mark stands alone
          open = Open::single;
          piece.begin = i;
        }
        break;
    }
    i += len;
  }
  close(n);
}

class ApproxTokenizer final : public Tokenizer {
 public:
  explicit ApproxTokenizer(bool words) : words_(words) {}

  std::string id() const override { return words_ ? "approx-wordpiece-v2" : "approx-wordpiece-v1"; }

  void spans(std::string_view text,
             std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) const override {
    out.clear();
    scan(text, words_, [&](std::size_t b, std::size_t e) {
      out.emplace_back(static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e));
    });
  }

  int count(std::string_view text) const override {
    int n = 0;
    scan(text, words_, [&](std::size_t, std::size_t) { ++n; });
    return n;
  }

 private:
  bool words_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_approx_tokenizer(bool words) {
  return std::make_unique<ApproxTokenizer>(words);
}

}  // namespace quarry::chunk
