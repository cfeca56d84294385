#include "search/keyword.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_set>

#include "core/util.h"
#include "quarry/error.h"

namespace quarry::search {
namespace {

// A compact English stopword list (Lucene's classic set plus pronouns and auxiliaries). These
// words carry almost no IDF, but each one OR-ed into the query makes FTS5 visit its whole
// posting list: dropping them is both faster and measured neutral-to-better (docs/benchmarks.md).
constexpr std::array<std::string_view, 71> kStopwords = {
    "a",    "an",   "and",  "are",  "as",    "at",    "be",    "but",   "by",    "for",
    "if",   "in",   "into", "is",   "it",    "no",    "not",   "of",    "on",    "or",
    "such", "that", "the",  "their", "then", "there", "these", "they",  "this",  "to",
    "was",  "will", "with", "were", "been",  "being", "do",    "does",  "did",   "has",
    "have", "had",  "from", "its",  "than",  "which", "who",   "whom",  "what",  "when",
    "where", "why", "how",  "i",    "me",    "my",    "we",    "our",   "you",   "your",
    "he",   "him",  "his",  "she",  "her",   "them",  "so",    "can",   "would", "should",
    "could"};

constexpr std::size_t kMaxTerms = 64;

bool is_word_byte(unsigned char c) { return std::isalnum(c) || c >= 0x80 || c == '_'; }

}  // namespace

bool is_stopword(const std::string& w) {
  return std::find(kStopwords.begin(), kStopwords.end(), w) != kStopwords.end();
}

std::vector<std::string> query_terms(const std::string& raw) {
  const std::string text = core::repair_utf8(raw);
  std::vector<std::string> words;
  for (std::size_t i = 0; i < text.size();) {
    if (!is_word_byte(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && is_word_byte(static_cast<unsigned char>(text[j]))) ++j;
    std::string w = text.substr(i, j - i);
    for (auto& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    words.push_back(std::move(w));
    i = j;
  }
  std::vector<std::string> kept;
  std::unordered_set<std::string> seen;
  for (const auto& w : words)
    if (!is_stopword(w) && seen.insert(w).second) kept.push_back(w);
  if (kept.empty())  // a query made only of stopwords still searches for them
    for (const auto& w : words)
      if (seen.insert(w).second) kept.push_back(w);
  if (kept.size() > kMaxTerms) kept.resize(kMaxTerms);
  return kept;
}

std::string safe_match_expression(const std::string& text) {
  std::string expr;
  for (const auto& w : query_terms(text)) {
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

Document to_document(const catalog::DocumentRow& r, const std::string& data_dir) {
  Document d;
  d.id = r.id;
  d.kb = r.kb;
  d.filename = r.filename;
  d.title = r.title;
  d.source_sha256 = r.source_sha256;
  d.content_sha256 = r.content_sha256;
  d.metadata_json = r.metadata_json;
  if (r.subject_key && r.subject_value) d.subject = Subject{*r.subject_key, *r.subject_value};
  d.converter = r.converter;
  d.raw_ext = r.raw_ext;
  d.source_bytes = r.source_bytes;
  d.markdown_bytes = r.markdown_bytes;
  d.chunk_count = r.chunk_count;
  d.created_at = core::iso8601_utc(r.created_at);
  d.updated_at = core::iso8601_utc(r.updated_at);
  if (!data_dir.empty()) {
    d.markdown_path = data_dir + "/kb/" + r.kb + "/docs/" + r.id + ".md";
    d.raw_path = data_dir + "/kb/" + r.kb + "/raw/" + r.id + (r.raw_ext.empty() ? "" : "." + r.raw_ext);
  }
  return d;
}

std::vector<Hit> keyword_search(const catalog::Catalog& cat, const std::string& kb,
                                const std::string& query, const core::Filter& filter, int top_k,
                                double min_score, bool advanced, const KeywordParams& params) {
  if (top_k < 1 || top_k > 1000)
    throw Error(Code::invalid_argument, "top_k must be between 1 and 1000", {{"field", "top_k"}});
  if (min_score < 0 || min_score > 1)
    throw Error(Code::invalid_argument, "min_score must be between 0 and 1", {{"field", "min_score"}});
  catalog::KeywordQuery q;
  q.match = advanced ? query : safe_match_expression(query);
  if (q.match.empty()) {
    cat.get_kb(kb);  // still report an unknown KB
    return {};
  }
  q.filter = filter;
  q.params = params.bm25;
  // Sibling windows of one oversize section collapse to the best; fetch extra to keep k hits.
  q.limit = params.collapse_windows ? top_k * 3 + 10 : top_k;
  auto rows = cat.keyword_search(kb, q);

  std::vector<Hit> hits;
  std::unordered_set<std::string> parents;
  for (auto& r : rows) {
    if (params.collapse_windows && r.chunk.parent_chunk && !parents.insert(*r.chunk.parent_chunk).second)
      continue;
    Hit h;
    h.kb = r.doc.kb;
    h.doc_id = r.doc.id;
    h.filename = r.doc.filename;
    h.title = r.doc.title;
    h.chunk_id = r.chunk.chunk_id;
    h.chunk_index = r.chunk.index;
    h.parent_chunk = r.chunk.parent_chunk;
    h.heading_path = std::move(r.chunk.heading_path);
    h.offset = r.chunk.offset;
    h.length = r.chunk.length;
    h.snippet = std::move(r.snippet);
    h.raw_score = r.raw_score;
    h.score = r.max_score > 0 ? std::clamp(r.raw_score / r.max_score, 0.0, 1.0) : 0.0;
    h.metric = "bm25";
    if (r.doc.subject_key && r.doc.subject_value) h.subject = Subject{*r.doc.subject_key, *r.doc.subject_value};
    h.metadata_json = std::move(r.doc.metadata_json);
    if (h.score < min_score) break;  // rows are ordered by score
    hits.push_back(std::move(h));
    if (static_cast<int>(hits.size()) == top_k) break;
  }
  return hits;
}

}  // namespace quarry::search
