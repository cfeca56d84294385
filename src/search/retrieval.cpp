// The retrieval modes of SPEC §4 over one KB: which mode answers, degrading hybrid/auto to
// keyword with a reason, the fusion of keyword and vector candidates, and grep.
#include "search/retrieval.h"

#include <re2/re2.h>

#include <algorithm>
#include <unordered_map>

#include "core/filter.h"
#include "quarry/deadline.h"
#include "quarry/error.h"
#include "search/fusion.h"
#include "search/grep.h"
#include "search/hits.h"
#include "search/keyword.h"

namespace quarry::search {

namespace {

bool mode_enabled(const KbConfig& c, Mode mode) {
  return std::find(c.modes.begin(), c.modes.end(), mode) != c.modes.end();
}

std::string reason_code(const ServingVectors& v) {
  if (v.blocked) return "blocked_address";
  return v.has_embedder ? "embedder_unavailable" : "no_embedder";
}

// Keyword and vector candidates fused (SPEC §4). If the query cannot be embedded right now
// (a remote provider down, rate-limited), answers by keyword and says why. Returns the mode
// that answered.
Mode hybrid(const SearchRequest& r, const KbScope& kb, const core::Filter& filter,
            const ServingVectors& vec, SearchResponse& resp) {
  const KbConfig& config = kb.config;
  FusionOptions fo;
  fo.fusion = r.fusion.value_or(config.hybrid.fusion);
  fo.semantic_ratio = r.semantic_ratio.value_or(config.hybrid.semantic_ratio);
  // A ratio the request names is the ratio it gets: fixed for that query.
  fo.weighting = r.semantic_ratio ? "fixed" : config.hybrid.weighting;
  fo.rrf_k = config.hybrid.rrf_k;
  fo.keyword_weight = config.hybrid.keyword_weight;
  fo.vector_weight = config.hybrid.vector_weight;
  if (fo.fusion != "interpolation" && fo.fusion != "rrf")
    throw Error(Code::invalid_argument, "fusion must be interpolation or rrf",
                {{"field", "fusion"}});
  if (fo.semantic_ratio < 0 || fo.semantic_ratio > 1)
    throw Error(Code::invalid_argument, "semantic_ratio must be between 0 and 1",
                {{"field", "semantic_ratio"}});
  const int depth = fusion_depth(r.top_k);
  // Both sides are bare candidates (keys and scores): a top 10 ranks 50 keyword and 200 vector
  // chunks, and only the hits returned are read and highlighted (reading and highlighting all
  // 50 keyword rows was half of a hybrid query).
  auto kw = keyword_candidates(kb.cat, kb.ref, r.query, filter, depth, r.advanced);
  std::vector<Hit> vh;
  try {
    // The vector side goes deeper: a chunk missing from a list counts 0 there, and a deeper
    // vector list gives more keyword candidates their real similarity (measured: SciFact
    // nDCG@10 +0.002 at α 0.1 for 1000 instead of 600 candidates). They are bare hits: only
    // the winners of the fusion are read from the catalog.
    vh = vector_candidates(kb.ref, r.query, filter, vector_fusion_depth(r.top_k), vec.source);
  } catch (const Error& e) {
    // The caller's own deadline (quarry/deadline.h) ends the request; a remote embedder's
    // timeout only degrades it.
    if (e.code() == Code::invalid_argument || deadline_passed()) throw;
    resp.degraded.push_back(std::string(code_name(e.code())) + ": " + e.message() +
                            "; answered by keyword");
    resp.hits = std::move(kw);
    std::erase_if(resp.hits, [&](const Hit& h) { return h.score < r.min_score; });
    complete_hits(kb.cat, kb.ref, r.query, resp.hits, r.top_k, r.advanced);
    return Mode::keyword;
  }
  if (fo.weighting == "adaptive" && vec.source.provider)
    fo.query_coverage = vec.source.provider->query_coverage(r.query);
  // `auto` answers by keyword when the query's vector weight comes to nothing (the vector list
  // shares none of the keyword list's top documents, or the model cannot read the query): the
  // keyword hits and scores as they are, and `mode` says keyword (docs/search.md).
  // The query's own ratio, worked out once: the fusion below uses it as given.
  if (fo.fusion == "interpolation") {
    fo.semantic_ratio = query_ratio(kw, vh, fo);
    fo.weighting = "fixed";
  }
  if (r.mode.value_or(kDefaultMode) == Mode::automatic && fo.fusion == "interpolation" &&
      fo.semantic_ratio == 0) {
    resp.hits = std::move(kw);
    std::erase_if(resp.hits, [&](const Hit& h) { return h.score < r.min_score; });
    complete_hits(kb.cat, kb.ref, r.query, resp.hits, r.top_k, r.advanced);
    return Mode::keyword;
  }
  // A few more than top_k: stale vectors and sibling windows are dropped once rows are read.
  resp.hits = fuse(kw, vh, fo, r.top_k * 2 + 10, r.min_score);
  complete_hits(kb.cat, kb.ref, r.query, resp.hits, r.top_k, r.advanced);
  // Each mode's own list; chunks already in the fused top are copied, not read again. Two
  // spare keyword candidates fill in for chunks deleted since they were ranked.
  if (static_cast<int>(kw.size()) > r.top_k + 2) kw.resize(r.top_k + 2);
  complete_hits(kb.cat, kb.ref, r.query, kw, r.top_k, r.advanced, &resp.hits);
  if (static_cast<int>(vh.size()) > r.top_k * 2 + 10) vh.resize(r.top_k * 2 + 10);
  complete_hits(kb.cat, kb.ref, r.query, vh, r.top_k, r.advanced, &resp.hits);
  resp.per_mode.emplace_back("keyword", std::move(kw));
  resp.per_mode.emplace_back("vector", std::move(vh));
  return Mode::hybrid;
}

std::vector<Hit> grep_as_hits(const SearchRequest& r, const KbScope& kb) {
  GrepRequest g;
  g.kb = r.kb;
  g.pattern = r.query;
  g.max_matches = static_cast<std::size_t>(std::max(1, r.top_k));
  g.filter_json = r.filter_json;
  GrepResponse gr = grep(g, kb);
  std::vector<Hit> hits;
  for (auto& m : gr.matches) {
    Hit h;
    h.kb = m.kb;
    h.doc_id = m.doc_id;
    h.filename = m.filename;
    h.snippet = m.text;  // grep marks nothing: the snippet is the line, the matches are ranges
    h.snippet_text = m.text;
    h.highlights = code_point_ranges(m.text, m.ranges);
    h.score = 1;
    h.raw_score = 1;
    h.metric = "grep";
    h.subject = m.subject;
    hits.push_back(std::move(h));
  }
  return hits;
}

}  // namespace

// auto's hint for a query that keyword search can only read as words (docs/search.md): a
// regular expression (an escape such as \d or \., a wildcard .* or .+, a class with a range
// [a-z], an anchor ^ or $ at an end, a group (?, alternation a|b, a count {2,3}), or, in a query
// of one word, a code identifier (snake_case, camelCase, a::b, a->b, call()).
std::string grep_hint(const std::string& query) {
  static const RE2 regex(
      R"(\\[dwsbDWSB.()\[\]]|\.[*+?]|\[[^\]]*\w-\w[^\]]*\]|^\^|\$$|\(\?|\w\|\w|\w\{\d+(,\d*)?\})");
  static const RE2 code(R"(^\S*(\w_\w|::\w|\w->\w|\w\(\)?|[a-z][A-Z][a-z])\S*$)");
  if (query.size() > 500) return "";
  const char* what = RE2::PartialMatch(query, regex)  ? "a regular expression"
                     : RE2::PartialMatch(query, code) ? "a code identifier"
                                                      : nullptr;
  if (!what) return "";
  return std::string("the query looks like ") + what +
         ": keyword search reads only its words, grep matches it as written (`quarry grep`, "
         "POST /api/v1/kbs/{kb}/grep, or the MCP tool grep)";
}

SearchResponse search(const SearchRequest& r, const KbScope& kb) {
  const KbConfig& config = kb.config;
  core::Filter filter = core::parse_filter_text(r.filter_json);
  SearchResponse resp;
  resp.kb = r.kb;
  Mode mode = r.mode.value_or(kDefaultMode);
  const bool fused = mode == Mode::hybrid || mode == Mode::automatic;
  if (fused && !mode_enabled(config, mode)) {
    // A KB without an embedder says so (the fix is an embedder, not a list of modes).
    const ServingVectors& v = kb.vectors.serving();
    if (!v.has_embedder)
      resp.degraded.push_back("no_embedder: " + v.unavailable + "; answered by keyword");
    else
      resp.degraded.push_back(std::string("mode_disabled: ") + mode_name(mode) +
                              " is not among the modes of knowledge base '" + r.kb +
                              "'; answered by keyword");
    mode = Mode::keyword;
  }
  if (!mode_enabled(config, mode)) {
    // Without an embedder, listing the mode would only meet the next refusal: name the real fix.
    if (mode == Mode::vector && config.embedder.provider.empty())
      throw Error(
          Code::mode_unavailable,
          "vector search needs an embedder, and knowledge base '" + r.kb +
              "' has none: set one with `quarry kb set " + r.kb +
              " embedder.provider=static:glove-100d` (the local default model; "
              "docs/configuration.md lists the others), then embed with `quarry reindex --kb " +
              r.kb + "`",
          {{"mode", "vector"}, {"reason", "no_embedder"}, {"field", "embedder.provider"}});
    std::string modes;  // the KB's modes and this one
    for (Mode m : config.modes) modes += std::string(mode_name(m)) + ",";
    throw Error(Code::mode_unavailable,
                std::string(mode_name(mode)) + " search is disabled for knowledge base '" + r.kb +
                    "': add it to the KB's modes with `quarry kb set " + r.kb + " modes=" + modes +
                    mode_name(mode) + "`",
                {{"mode", mode_name(mode)}, {"field", "modes"}});
  }
  if (mode == Mode::grep) {
    resp.hits = grep_as_hits(r, kb);
  } else {
    const ServingVectors* vec = nullptr;
    if (mode != Mode::keyword) vec = &kb.vectors.serving();
    if (mode == Mode::vector && !vec->usable())
      throw Error(
          Code::mode_unavailable,
          "vector search is unavailable for knowledge base '" + r.kb + "': " + vec->unavailable,
          {{"mode", "vector"}, {"reason", reason_code(*vec)}});
    if (fused && mode != Mode::keyword && !vec->usable()) {
      resp.degraded.push_back(reason_code(*vec) + ": " + vec->unavailable +
                              "; answered by keyword");
      mode = Mode::keyword;
    }
    if (mode == Mode::keyword) {
      resp.hits = keyword_search(kb.cat, kb.ref, r.query, filter, r.top_k, r.min_score, r.advanced);
    } else if (mode == Mode::vector) {
      resp.hits = vector_search(kb.cat, kb.ref, r.query, filter, r.top_k, r.min_score, vec->source);
    } else {
      mode = hybrid(r, kb, filter, *vec, resp);
    }
  }
  resp.mode = mode;
  if (r.mode.value_or(kDefaultMode) == Mode::automatic && !r.advanced)
    resp.hint = grep_hint(r.query);
  resp.index_status.keyword = kb.cat.documents().any(kb.ref, filter) ? "ready" : "not_built";
  resp.has_embedder = !config.embedder.provider.empty();
  if (resp.has_embedder) resp.index_status.vector = kb.vectors.status(filter);
  return resp;
}

GrepResponse grep(const GrepRequest& r, const KbScope& kb) {
  if (!mode_enabled(kb.config, Mode::grep))
    throw Error(Code::mode_unavailable, "grep is disabled for knowledge base '" + r.kb + "'",
                {{"mode", "grep"}});
  core::Filter filter = core::parse_filter_text(r.filter_json);
  std::vector<GrepFile> files;
  std::unordered_map<std::string, std::optional<Subject>> subjects;
  for (auto& d : kb.cat.documents().refs(kb.ref, filter)) {
    if (d.subject_key && d.subject_value)
      subjects[d.id] = Subject{*d.subject_key, *d.subject_value};
    std::string path = kb.layout.markdown_path(r.kb, d.id);
    files.push_back({std::move(d.id), std::move(d.filename), std::move(path)});
  }
  GrepOptions o;
  o.pattern = r.pattern;
  o.literal = r.literal;
  o.ignore_case = r.ignore_case;
  o.word = r.word;
  o.invert = r.invert;
  o.before_context = r.before_context;
  o.after_context = r.after_context;
  o.max_matches = r.max_matches;
  auto res = grep_files(files, o);
  GrepResponse out;
  out.kb = r.kb;
  out.truncated = res.truncated;
  out.files_searched = res.files_searched;
  out.files_matched = res.files_matched;
  for (auto& m : res.matches) {
    GrepHit h;
    h.kb = r.kb;
    h.doc_id = std::move(m.doc_id);
    h.filename = std::move(m.filename);
    h.line = m.line;
    h.text = std::move(m.text);
    h.ranges = std::move(m.ranges);
    for (auto& l : m.before) h.before.push_back({l.line, std::move(l.text)});
    for (auto& l : m.after) h.after.push_back({l.line, std::move(l.text)});
    auto it = subjects.find(h.doc_id);
    if (it != subjects.end()) h.subject = it->second;
    out.matches.push_back(std::move(h));
  }
  return out;
}

}  // namespace quarry::search
