// quarry search QUERY --kb NAME [--mode ...] and quarry grep PATTERN --kb NAME. The flags that
// were given are gathered into the request object REST and MCP take, and decoded by the same
// codec (wire/requests.h), so the defaults and bounds are the same on every surface.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <iterator>
#include <map>
#include <set>

#include "cli/commands.h"
#include "wire/requests.h"

namespace quarry::cli {
using nlohmann::json;

namespace {

std::string highlight_ranges(const std::string& text,
                             const std::vector<std::pair<std::size_t, std::size_t>>& ranges,
                             bool color) {
  if (!color) return text;
  std::string out;
  std::size_t pos = 0;
  for (const auto& [b, e] : ranges) {
    if (b < pos || e > text.size()) continue;
    out += text.substr(pos, b - pos) + "\033[1;31m" + text.substr(b, e - b) + "\033[0m";
    pos = e;
  }
  return out + text.substr(pos);
}

// A search that named no mode runs in auto mode; on a KB that simply has no embedder that is
// keyword search, as the user expects, and saying so on every search would be noise (--json
// still reports it in `degraded`). A mode the user chose, or another reason, is always noted.
void print_search_human(const SearchResponse& r, bool mode_given) {
  for (const auto& d : r.degraded)
    if (mode_given || d.rfind("no_embedder:", 0) != 0) std::cerr << "note: " << d << "\n";
  if (!r.hint.empty()) std::cerr << "hint: " << r.hint << "\n";
  // Vectors still pending: the vector side answered from what is embedded so far.
  const bool vectors_answered = r.mode == Mode::vector || r.mode == Mode::hybrid;
  if (vectors_answered && r.index_status.vector != "ready" && !r.index_status.vector.empty())
    std::cerr << "note: vector index " << r.index_status.vector << ": not every chunk of '" << r.kb
              << "' has its vector yet, so the vector side answered from those that do; "
                 "`quarry reindex --kb "
              << r.kb << "` (or `ingest --wait`) embeds the rest\n";
  if (r.hits.empty()) std::cout << "no hits\n";
  int n = 0;
  for (const auto& h : r.hits) {
    std::cout << ++n << ". " << h.filename;
    if (!h.heading_path.empty()) {
      std::cout << "  §";
      for (std::size_t i = 0; i < h.heading_path.size(); ++i)
        std::cout << (i ? " > " : " ") << h.heading_path[i];
    }
    std::printf("   score %.3f (%s %.3f)\n", h.score, h.metric.c_str(), h.raw_score);
    std::cout << "   " << h.snippet << "\n";
    std::cout << "   doc " << h.doc_id;
    if (h.subject) std::cout << "  subject " << h.subject->key << "=" << h.subject->value;
    std::cout << "\n";
  }
  std::printf("(%zu hits, %s mode, keyword index %s", r.hits.size(), mode_name(r.mode),
              r.index_status.keyword.c_str());
  if (r.has_embedder) std::printf(", vector index %s", r.index_status.vector.c_str());
  std::printf(", %.2f ms)\n", r.took_ms);
}

// Reads a filter given as JSON text, @file or - into the request object (text that is not a
// JSON object is the codec's to refuse, naming `filter`).
nlohmann::json filter_value(const std::string& flag) {
  const std::string text = read_arg_or_file(flag);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw Error(Code::invalid_argument, "--filter is not valid JSON: " + text,
                {{"field", "filter"}});
  return j;
}

// The value of an option that was given on the command line, into `body[key]`.
template <typename T>
void put(nlohmann::json& body, const char* key, const CLI::Option* opt, const T& value) {
  if (opt->count() > 0) body[key] = value;
}

// Whether to color: --color=always|never, or auto: a terminal, unless NO_COLOR is set and not
// empty (https://no-color.org).
bool use_color(const std::string& when) {
  if (when == "always") return true;
  if (when == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(1) != 0 && !(no_color && *no_color);
}

// Every filename of the KB's documents (matching the filter), in id order: what grep -L lists
// the unmatched ones of.
std::vector<std::string> all_filenames(Engine& engine, const std::string& kb,
                                       const std::string& filter_json) {
  std::vector<std::string> out;
  std::string cursor;
  do {
    auto page = engine.list_documents(kb, cursor, 1000, filter_json);
    for (const auto& d : page.documents) out.push_back(d.filename);
    cursor = page.next_cursor;
  } while (!cursor.empty());
  return out;
}

}  // namespace

void add_search_commands(CLI::App& app, Globals& g, int& exit_code) {
  struct SearchArgs {
    std::string kb, query, mode, filter, fusion;
    int top_k = 0;
    double min_score = 0, semantic_ratio = 0;
    bool advanced = false;
  };
  auto sa = std::make_shared<SearchArgs>();
  auto* search = app.add_subcommand("search", "Search a knowledge base");
  search->add_option("query", sa->query, "What to look for (- reads it from stdin)")->required();
  search->add_option("--kb", sa->kb, "Knowledge base")->required();
  auto* mode = search->add_option("--mode", sa->mode,
                                  "auto (default) | keyword | grep | vector | hybrid; auto is "
                                  "hybrid where the KB has an embedder, else keyword");
  mode->check(CLI::IsMember({"keyword", "grep", "vector", "hybrid", "auto"}));
  auto* top_k = search->add_option("--top-k,-k", sa->top_k, "Number of hits (1-1000, default 10)");
  auto* min_score =
      search->add_option("--min-score", sa->min_score, "Drop hits scoring below this (0-1)");
  auto* filter =
      search->add_option("--filter", sa->filter, "Metadata filter (JSON, §4 language, or @file)");
  auto* fusion = search->add_option("--fusion", sa->fusion, "Hybrid fusion: interpolation | rrf");
  fusion->check(CLI::IsMember({"interpolation", "rrf"}));
  auto* ratio = search->add_option("--semantic-ratio", sa->semantic_ratio,
                                   "Hybrid interpolation weight of the vector side (0-1)");
  ratio->check(CLI::Range(0.0, 1.0));
  search->add_flag("--advanced", sa->advanced,
                   "FTS5 query syntax: \"phrases\", AND/OR/NOT, prefix*, NEAR()");
  search->callback([&g, sa, mode, top_k, min_score, filter, fusion, ratio] {
    if (sa->query == "-") {  // the query from stdin, as a pipe gives it (one trailing newline off)
      sa->query.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
      while (!sa->query.empty() && (sa->query.back() == '\n' || sa->query.back() == '\r'))
        sa->query.pop_back();
    }
    nlohmann::json body = {{"query", sa->query}};
    put(body, "mode", mode, sa->mode);
    put(body, "top_k", top_k, sa->top_k);
    put(body, "min_score", min_score, sa->min_score);
    if (filter->count() > 0 && !sa->filter.empty()) body["filter"] = filter_value(sa->filter);
    put(body, "fusion", fusion, sa->fusion);
    put(body, "semantic_ratio", ratio, sa->semantic_ratio);
    if (sa->advanced) body["advanced"] = true;
    const SearchRequest req = wire::decode_search(body, sa->kb);
    auto r = open_engine(g)->search(req);
    if (g.json)
      print_json(to_json(r));
    else
      print_search_human(r, req.mode.has_value());
  });

  struct GrepArgs {
    std::string kb, pattern, filter, color = "auto";
    bool literal = false, ignore_case = false, word = false, invert = false;
    bool count = false, files_with_matches = false, files_without_match = false;
    bool only_matching = false, quiet = false;
    int context = 0, before = 0, after = 0, max_matches = 0;
  };
  auto ga = std::make_shared<GrepArgs>();
  auto* grep =
      app.add_subcommand("grep", "Regular-expression (RE2) or literal search over the Markdown");
  grep->add_option("pattern", ga->pattern, "RE2 pattern (or a literal with -F)")->required();
  grep->add_option("--kb", ga->kb, "Knowledge base")->required();
  grep->add_flag("--fixed-strings,-F", ga->literal, "Treat the pattern as a literal string");
  grep->add_flag("--ignore-case,-i", ga->ignore_case, "Case-insensitive");
  grep->add_flag("--word-regexp,-w", ga->word, "Match whole words only");
  grep->add_flag("--invert-match,-v", ga->invert, "Select the lines that do not match");
  auto* context =
      grep->add_option("--context,-C", ga->context, "Lines of context before and after (0-100)");
  auto* before = grep->add_option("--before-context,-B", ga->before, "Lines before (0-100)");
  auto* after = grep->add_option("--after-context,-A", ga->after, "Lines after (0-100)");
  auto* max_matches = grep->add_option("--max-matches,-m", ga->max_matches,
                                       "Stop after this many matching lines (1-100000, default "
                                       "1000)");
  auto* gfilter =
      grep->add_option("--filter", ga->filter, "Only documents whose metadata match (JSON)");
  // Output modes as GNU grep and ripgrep have them (docs/cli.md); -c, -l, -L count every match.
  auto* count =
      grep->add_flag("--count,-c", ga->count, "Print each matching document's count of lines");
  auto* lists = grep->add_flag("--files-with-matches,-l", ga->files_with_matches,
                               "Print only the names of documents with a match");
  auto* unlisted = grep->add_flag("--files-without-match,-L", ga->files_without_match,
                                  "Print only the names of documents without a match");
  auto* only = grep->add_flag("--only-matching,-o", ga->only_matching,
                              "Print only the matched parts, one per line");
  auto* quiet = grep->add_flag("--quiet,-q", ga->quiet,
                               "Print nothing; exit 0 when something matched, else 1");
  for (auto* a : {count, lists, unlisted, only, quiet})
    for (auto* b : {count, lists, unlisted, only, quiet})
      if (a != b) a->excludes(b);
  grep->add_option("--color", ga->color,
                   "Highlight matches: auto (a terminal, no NO_COLOR) | always | never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  grep->callback([&g, &exit_code, ga, context, before, after, max_matches, gfilter] {
    nlohmann::json body = {{"pattern", ga->pattern}};
    if (ga->literal) body["literal"] = true;
    if (ga->ignore_case) body["ignore_case"] = true;
    if (ga->word) body["word"] = true;
    if (ga->invert) body["invert"] = true;
    // -C sets both sides and wins over -A/-B, as it always has here (docs/cli.md).
    if (context->count() > 0) {
      body["context"] = ga->context;
    } else {
      put(body, "before_context", before, ga->before);
      put(body, "after_context", after, ga->after);
    }
    put(body, "max_matches", max_matches, ga->max_matches);
    if (gfilter->count() > 0 && !ga->filter.empty()) body["filter"] = filter_value(ga->filter);
    const bool per_document = ga->count || ga->files_with_matches || ga->files_without_match;
    if (ga->quiet) body["max_matches"] = 1;  // one match decides
    if (per_document && max_matches->count() == 0) body["max_matches"] = wire::kMaxMatchesMax;
    const GrepRequest req = wire::decode_grep(body, ga->kb);
    auto engine = open_engine(g);
    auto r = engine->grep(req);
    if (ga->quiet) {
      exit_code = r.matches.empty() ? 1 : 0;
      return;
    }
    if (g.json) {
      print_json(to_json(r));
      return;
    }
    if (per_document) {
      std::vector<std::pair<std::string, std::size_t>> counts;  // in the order of the matches
      std::map<std::string, std::size_t> at;
      for (const auto& m : r.matches) {
        auto [it, fresh] = at.emplace(m.filename, counts.size());
        if (fresh) counts.push_back({m.filename, 0});
        ++counts[it->second].second;
      }
      if (ga->files_without_match) {
        std::set<std::string> matched;
        for (const auto& [name, n] : counts) matched.insert(name);
        for (const auto& name : all_filenames(*engine, ga->kb, req.filter_json))
          if (!matched.count(name)) std::cout << name << "\n";
      } else {
        for (const auto& [name, n] : counts)
          std::cout << name << (ga->count ? ":" + std::to_string(n) : "") << "\n";
      }
      if (r.truncated)
        std::cerr << "(stopped after " << r.matches.size()
                  << " matching lines: the lists and counts cover those; raise --max-matches)\n";
      return;
    }
    const bool color = use_color(ga->color);
    if (ga->only_matching) {
      for (const auto& m : r.matches)
        for (const auto& [b, e] : m.ranges) {
          if (b > e || e > m.text.size()) continue;
          const std::string part = m.text.substr(b, e - b);
          std::cout << m.filename << ":" << m.line << ":"
                    << (color ? "\033[1;31m" + part + "\033[0m" : part) << "\n";
        }
      if (r.truncated)
        std::cerr << "(stopped after " << r.matches.size()
                  << " matching lines; raise --max-matches)\n";
      return;
    }
    // With context, "--" separates groups as in GNU grep: between them, not after the last.
    const bool context = req.before_context || req.after_context;
    bool first = true;
    for (const auto& m : r.matches) {
      if (context && !first) std::cout << "--\n";
      first = false;
      for (const auto& l : m.before)
        std::cout << m.filename << "-" << l.line << "-" << l.text << "\n";
      std::cout << m.filename << ":" << m.line << ":" << highlight_ranges(m.text, m.ranges, color)
                << "\n";
      for (const auto& l : m.after)
        std::cout << m.filename << "-" << l.line << "-" << l.text << "\n";
    }
    if (r.truncated)
      std::cerr << "(stopped after " << r.matches.size()
                << " matching lines; raise --max-matches)\n";
  });
}

}  // namespace quarry::cli
