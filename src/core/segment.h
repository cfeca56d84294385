// Words in scripts written without spaces, and the folding the keyword index applies to all text
// (issue 27). The keyword index (catalog/sqlite/'s FTS5 tokenizer), the query parser (search/)
// and the approximate chunk tokenizer (chunk/) must cut text the same way, so the rules live
// here, once.
//
//  - Folding: NFKC with full Unicode case folding (ICU's nfkc_cf): `Straße` and `strasse`,
//    full-width `ＡＢＣ１２３` and `ABC123`, half-width `ｶﾀｶﾅ` and `カタカナ` become one form.
//    ASCII is left as it is (the word tokenizer lowercases it), so English text costs nothing.
//  - Unspaced scripts: Han, Hiragana, Katakana, Hangul, Thai, Lao, Khmer and Myanmar. Their runs
//    are cut into words by ICU's dictionary-based word break (`icu`), or into overlapping
//    character bigrams (`bigram`, Han, Kana and Hangul; the Southeast Asian scripts, whose
//    letters combine, always take ICU's words). Every other run is left to the word tokenizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace quarry::core {

enum class Segmenter {
  icu,     // dictionary words (ICU word break): the default
  bigram,  // overlapping character bigrams (Lucene's CJK analyzer)
};

// How a KB's keyword index cuts text, which its queries must cut the same way: `segmented`
// is false for the KBs made before segmentation (their index splits on spaces only).
struct KeywordAnalysis {
  bool segmented = false;
  Segmenter segmenter = Segmenter::icu;
};

// "icu" | "bigram"; throws invalid_argument naming the choices for anything else.
Segmenter segmenter_from_name(std::string_view name);
const char* segmenter_name(Segmenter s);

// Text folded by nfkc_cf, with where each of its bytes came from.
struct Folded {
  std::string text;
  // source[i]: the byte of the original text that text[i] was folded from (the start of the
  // normalisation chunk it belongs to); source[text.size()] is the original's size.
  std::vector<std::uint32_t> source;
  // The original range [begin, end) of text's bytes [from, to).
  std::pair<std::size_t, std::size_t> original(std::size_t from, std::size_t to) const;
};

// `text` folded as above (invalid UTF-8 is replaced by U+FFFD first, mapped to its bytes).
Folded fold(std::string_view text);
// The folded text alone (queries: no offsets needed).
std::string fold_text(std::string_view text);

// Is this code point one of an unspaced script (or a mark/length sign that continues one)?
bool is_unspaced(char32_t cp);

// The runs of `text` (folded): fn(begin, end, unspaced) for each maximal run of unspaced-script
// code points and each run of anything else, in order, covering the text.
void script_runs(std::string_view text,
                 const std::function<void(std::size_t, std::size_t, bool)>& fn);

// The words of an unspaced run (byte offsets into `run`), in order: ICU's words, or bigrams
// (a lone character is a word of its own).
void segment_run(std::string_view run, Segmenter s,
                 const std::function<void(std::size_t, std::size_t)>& fn);

// Decodes the code point at text[i] and its length in bytes; a malformed or truncated sequence,
// an overlong form or a surrogate is one byte of U+FFFD.
char32_t decode_utf8(std::string_view text, std::size_t i, std::size_t* len);

// Is this code point Thai, Lao, Khmer or Myanmar (the unspaced scripts whose letters combine, so
// that a character is no unit of meaning and ICU's words are the only cut)?
bool is_southeast_asian(char32_t cp);

}  // namespace quarry::core
