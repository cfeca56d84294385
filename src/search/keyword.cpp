#include "search/keyword.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "core/segment.h"
#include "core/util.h"
#include "quarry/error.h"
#include "search/hits.h"

namespace quarry::search {
namespace {

// A compact English stopword list (Lucene's classic set plus pronouns and auxiliaries). These
// words carry almost no IDF, but each one OR-ed into the query makes FTS5 visit its whole
// posting list: dropping them is both faster and measured neutral-to-better (docs/benchmarks.md).
constexpr std::array<std::string_view, 71> kStopwords = {
    "a",    "an",    "and",   "are",    "as",    "at",   "be",    "but",  "by",  "for",  "if",
    "in",   "into",  "is",    "it",     "no",    "not",  "of",    "on",   "or",  "such", "that",
    "the",  "their", "then",  "there",  "these", "they", "this",  "to",   "was", "will", "with",
    "were", "been",  "being", "do",     "does",  "did",  "has",   "have", "had", "from", "its",
    "than", "which", "who",   "whom",   "what",  "when", "where", "why",  "how", "i",    "me",
    "my",   "we",    "our",   "you",    "your",  "he",   "him",   "his",  "she", "her",  "them",
    "so",   "can",   "would", "should", "could"};

constexpr std::size_t kMaxTerms = 64;

// Code points that separate words in a query. ASCII letters, digits and '_' form words; so do
// non-ASCII letters, except the punctuation and space blocks below (Latin-1 punctuation, general
// punctuation such as dashes and curly quotes, CJK and full-width punctuation, BOM).
bool is_separator(std::uint32_t cp) {
  if (cp < 0x80) return !(std::isalnum(static_cast<int>(cp)) || cp == '_');
  return (cp <= 0xBF) || cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x206F) ||
         (cp >= 0x2E00 && cp <= 0x2E7F) || (cp >= 0x3000 && cp <= 0x303F) ||
         (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF0F) ||
         (cp >= 0xFF1A && cp <= 0xFF20) || cp == 0xFEFF || cp == 0xFFFD;
}

// Decodes the code point at text[i] (text is valid UTF-8) and its length.
std::uint32_t decode(const std::string& t, std::size_t i, std::size_t* len) {
  auto b = [&](std::size_t k) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(t[i + k]));
  };
  std::uint32_t c = b(0);
  if (c < 0x80) {
    *len = 1;
    return c;
  }
  if (c < 0xE0) {
    *len = 2;
    return ((c & 0x1F) << 6) | (b(1) & 0x3F);
  }
  if (c < 0xF0) {
    *len = 3;
    return ((c & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  }
  *len = 4;
  return ((c & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

}  // namespace

// Function words of Chinese (Simplified and Traditional) and Japanese particles and auxiliaries,
// as ICU's word break leaves them: words of their own whose postings cover most documents, like
// the English ones above (Lucene's Japanese analyzer drops them too). Dropping them made ICU
// queries 8-25% faster at the same nDCG@10 (cmrc2018-zh -0.0004, jaquad-ja +0.0025;
// docs/benchmarks.md). The list was written from grammar, not from those collections.
constexpr std::string_view kCjkStopwords[] = {
    "的",   "了",   "是",   "在",   "和",   "与",     "與",   "及",     "或",     "也",
    "都",   "就",   "而",   "被",   "把",   "对",     "對",   "从",     "從",     "以",
    "之",   "其",   "这",   "這",   "那",   "着",     "著",   "过",     "過",     "吗",
    "嗎",   "呢",   "吧",   "啊",   "の",   "に",     "は",   "を",     "た",     "が",
    "で",   "て",   "と",   "し",   "も",   "な",     "か",   "へ",     "や",     "から",
    "まで", "より", "だ",   "です", "ます", "こと",   "もの", "この",   "その",   "これ",
    "それ", "ある", "いる", "する", "れる", "られる", "ない", "という", "として", "について"};

bool is_stopword(const std::string& w) {
  if (!w.empty() && static_cast<unsigned char>(w[0]) >= 0xE0)
    for (auto s : kCjkStopwords)
      if (s == w) return true;
  return std::find(kStopwords.begin(), kStopwords.end(), w) != kStopwords.end();
}

std::vector<std::string> query_terms(const std::string& raw, bool drop_stopwords,
                                     const core::KeywordAnalysis& analysis) {
  // A segmented index folded its text (nfkc_cf) before cutting it: the query is folded the
  // same way, so it is cut the same way.
  const std::string text =
      analysis.segmented ? core::fold_text(core::repair_utf8(raw)) : core::repair_utf8(raw);
  std::vector<std::string> words;
  auto add = [&](std::string w) {
    for (auto& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    words.push_back(std::move(w));
  };
  for (std::size_t i = 0; i < text.size();) {
    std::size_t len = 1;
    if (is_separator(decode(text, i, &len))) {
      i += len;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && !is_separator(decode(text, j, &len))) j += len;
    const std::string_view word = std::string_view(text).substr(i, j - i);
    if (!analysis.segmented) {
      add(std::string(word));
    } else {
      // Unspaced scripts (CJK, Thai, ...) hold many words between two spaces: each word (or
      // bigram) the index holds is a term of its own, and so is each spaced run inside.
      core::script_runs(word, [&](std::size_t b, std::size_t e, bool unspaced) {
        const std::string_view run = word.substr(b, e - b);
        if (!unspaced) {
          add(std::string(run));
          return;
        }
        core::segment_run(run, analysis.segmenter, [&](std::size_t wb, std::size_t we) {
          add(std::string(run.substr(wb, we - wb)));
        });
      });
    }
    i = j;
  }
  // Repeated words are kept: each occurrence is one more OR-ed phrase, so a word the query
  // repeats weighs more (query term frequency). Measured: CISI nDCG@10 0.339 -> 0.409, no loss
  // elsewhere (docs/benchmarks.md).
  std::vector<std::string> kept;
  for (const auto& w : words)
    if (!(drop_stopwords && is_stopword(w))) kept.push_back(w);
  if (kept.empty()) kept = words;  // a query made only of stopwords still searches for them
  if (kept.size() > kMaxTerms) kept.resize(kMaxTerms);
  return kept;
}

std::string safe_match_expression(const std::string& text, bool drop_stopwords,
                                  const core::KeywordAnalysis& analysis) {
  std::string expr;
  for (const auto& w : query_terms(text, drop_stopwords, analysis)) {
    if (!expr.empty()) expr += " OR ";
    expr += '"';
    for (char c : w) {
      if (c == '"') expr += '"';
      expr += c;
    }
    expr += '"';
  }
  return expr;
}

namespace {

// The query's chunks best first, as rowids and scores (no rows read yet), and the expression
// their snippets highlight. No rows when the text has no words.
struct Ranked {
  std::vector<catalog::KeywordRow> rows;
  std::string match;
};

Ranked rank(const catalog::Catalog& cat, const catalog::KbRef& kb, const std::string& query,
            const core::Filter& filter, int top_k, double min_score, bool advanced,
            const KeywordParams& params) {
  if (top_k < 1 || top_k > 1000)
    throw Error(Code::invalid_argument, "top_k must be between 1 and 1000", {{"field", "top_k"}});
  if (min_score < 0 || min_score > 1)
    throw Error(Code::invalid_argument, "min_score must be between 0 and 1",
                {{"field", "min_score"}});
  Ranked out;
  catalog::KeywordQuery q;
  const core::KeywordAnalysis analysis = cat.keyword().analysis(kb);
  q.match = match_expression(query, advanced, params.drop_stopwords, analysis);
  q.advanced = advanced;
  if (q.match.empty()) return out;
  q.filter = filter;
  q.params = params.bm25;
  // Sibling windows of one oversize section collapse to the best; rank extra rows so k hits
  // remain, but read rows (PK lookups) only as far as needed.
  q.limit = params.collapse_windows ? top_k * 3 + 10 : top_k;
  std::optional<std::vector<catalog::KeywordRow>> cached;
  if (!advanced && filter.empty())
    cached = cat.keyword().search_cached(kb, query_terms(query, params.drop_stopwords, analysis),
                                         q.limit, q.params);
  out.rows = cached ? std::move(*cached) : cat.keyword().search(kb, q);
  out.match = std::move(q.match);
  return out;
}

double normalised(const catalog::KeywordRow& r) {
  return r.max_score > 0 ? std::clamp(r.raw_score / r.max_score, 0.0, 1.0) : 0.0;
}

// Walks `rows` best first to at most top_k of them: stops below min_score, reads rows a batch
// at a time as far as needed (whole, or only their keys when `keys_only`), skips rows deleted
// since they were ranked and sibling windows of a section already kept. Returns row indices.
std::vector<std::size_t> keep(const catalog::Catalog& cat, std::vector<catalog::KeywordRow>& rows,
                              int top_k, double min_score, bool collapse, bool keys_only) {
  std::vector<std::size_t> kept;
  std::unordered_set<std::string> parents;
  const auto want = static_cast<std::size_t>(top_k);
  for (std::size_t i = 0; i < rows.size() && kept.size() < want; ++i) {
    auto& r = rows[i];
    if (normalised(r) < min_score) break;  // rows are ordered by score
    auto ready = [&] { return r.loaded || (keys_only && r.keyed); };
    if (!ready()) {
      const std::size_t batch = std::min(rows.size(), i + want - kept.size());
      if (keys_only)
        cat.keyword().load_keys(rows.data() + i, rows.data() + batch);
      else
        cat.keyword().load_rows(rows.data() + i, rows.data() + batch);
    }
    if (!ready()) continue;  // deleted between the phases
    if (collapse && r.chunk.parent_chunk && !parents.insert(*r.chunk.parent_chunk).second) continue;
    kept.push_back(i);
  }
  return kept;
}

}  // namespace

std::vector<Hit> keyword_search(const catalog::Catalog& cat, const catalog::KbRef& kb,
                                const std::string& query, const core::Filter& filter, int top_k,
                                double min_score, bool advanced, const KeywordParams& params) {
  auto [rows, match] = rank(cat, kb, query, filter, top_k, min_score, advanced, params);
  const auto kept = keep(cat, rows, top_k, min_score, params.collapse_windows, false);
  std::vector<Hit> hits;
  std::vector<const std::string*> texts;
  for (std::size_t i : kept) {
    hits.push_back(make_hit(rows[i], normalised(rows[i]), rows[i].raw_score, "bm25"));
    texts.push_back(&rows[i].chunk.text);
  }
  if (params.snippets) {
    auto snips = cat.keyword().snippets(kb, match, texts);
    for (std::size_t i = 0; i < hits.size(); ++i) set_snippet(hits[i], std::move(snips[i]));
  }
  return hits;
}

std::vector<Hit> keyword_candidates(const catalog::Catalog& cat, const catalog::KbRef& kb,
                                    const std::string& query, const core::Filter& filter, int depth,
                                    bool advanced, const KeywordParams& params) {
  auto rows = rank(cat, kb, query, filter, depth, 0, advanced, params).rows;
  std::vector<Hit> hits;
  for (std::size_t i : keep(cat, rows, depth, 0, params.collapse_windows, true)) {
    auto& r = rows[i];
    Hit h;
    h.kb = kb.name;
    h.doc_id = std::move(r.doc.id);
    h.chunk_index = r.chunk.index;
    h.chunk_id = std::move(r.chunk.chunk_id);
    h.parent_chunk = std::move(r.chunk.parent_chunk);
    h.score = normalised(r);
    h.raw_score = r.raw_score;
    h.metric = "bm25";
    hits.push_back(std::move(h));
  }
  return hits;
}

std::string match_expression(const std::string& query, bool advanced, bool drop_stopwords,
                             const core::KeywordAnalysis& analysis) {
  if (advanced) check_advanced_query(query);
  return advanced ? query : safe_match_expression(query, drop_stopwords, analysis);
}

namespace {

// 1-based position of byte `at` in `text`, in characters (code points), for messages.
std::size_t char_position(std::string_view text, std::size_t at) {
  std::size_t n = 1;
  for (std::size_t i = 0; i < at && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  return n;
}

[[noreturn]] void refuse_advanced(std::string_view query, std::size_t at, const std::string& what) {
  throw Error(Code::invalid_argument,
              "invalid advanced query at character " + std::to_string(char_position(query, at)) +
                  ": " + what +
                  " (advanced syntax: words, \"quoted phrases\", prefix*, AND, OR, NOT, "
                  "NEAR(a b, 5), (groups), column:word, in docs/search.md; or leave out --advanced "
                  "to search the words as typed)",
              {{"field", "query"}, {"position", std::to_string(char_position(query, at))}});
}

}  // namespace

void check_advanced_query(std::string_view q) {
  // What the previous token was: an operand can follow an operator or an opening parenthesis;
  // an operator must follow an operand.
  bool after_operand = false;
  std::vector<std::size_t> open;  // byte offsets of the unclosed '('
  std::string last_op;
  std::size_t last_op_at = 0;
  for (std::size_t i = 0; i < q.size();) {
    const char c = q[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '"') {
      std::size_t j = i + 1;
      while (true) {  // "" inside a phrase is a literal quote
        j = q.find('"', j);
        if (j == std::string_view::npos)
          refuse_advanced(q, i, "the phrase opened here has no closing \"");
        if (j + 1 < q.size() && q[j + 1] == '"') {
          j += 2;
          continue;
        }
        break;
      }
      i = j + 1;
      after_operand = true;
      last_op.clear();
    } else if (c == '(') {
      open.push_back(i++);
      after_operand = false;
      last_op.clear();
    } else if (c == ')') {
      if (open.empty()) refuse_advanced(q, i, "')' closes no '('");
      if (!after_operand) {
        if (!last_op.empty())
          refuse_advanced(q, last_op_at, "'" + last_op + "' has nothing after it");
        refuse_advanced(q, open.back(), "the group opened here is empty");
      }
      open.pop_back();
      ++i;
    } else {
      std::size_t j = i;
      while (j < q.size() && q[j] != ' ' && q[j] != '\t' && q[j] != '\n' && q[j] != '\r' &&
             q[j] != '(' && q[j] != ')' && q[j] != '"')
        ++j;
      const std::string_view word = q.substr(i, j - i);
      if (word == "AND" || word == "OR" || word == "NOT") {
        if (!after_operand)
          refuse_advanced(q, i, "'" + std::string(word) + "' has nothing before it");
        after_operand = false;
        last_op = std::string(word);
        last_op_at = i;
      } else {
        after_operand = true;  // a word, prefix*, column:word or NEAR (its group follows)
        last_op.clear();
      }
      i = j;
    }
  }
  if (!open.empty()) refuse_advanced(q, open.back(), "the group opened here has no closing ')'");
  if (!after_operand && !last_op.empty())
    refuse_advanced(q, last_op_at, "'" + last_op + "' has nothing after it");
}

}  // namespace quarry::search
