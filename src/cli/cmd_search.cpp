// quarry search QUERY --kb NAME [--mode ...] and quarry grep PATTERN --kb NAME
#include <iostream>

#include "cli/commands.h"

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

void print_search_human(const SearchResponse& r) {
  for (const auto& d : r.degraded) std::cerr << "note: " << d << "\n";
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
  std::printf("(%zu hits, %s mode, keyword index %s, vector index %s, %.2f ms)\n", r.hits.size(),
              mode_name(r.mode), r.index_status.keyword.c_str(), r.index_status.vector.c_str(),
              r.took_ms);
}

}  // namespace

void add_search_commands(CLI::App& app, Globals& g, int& /*exit_code*/) {
  auto sr = std::make_shared<SearchRequest>();
  auto mode = std::make_shared<std::string>("keyword");
  auto* search = app.add_subcommand("search", "Search a knowledge base");
  search->add_option("query", sr->query, "What to look for")->required();
  search->add_option("--kb", sr->kb, "Knowledge base")->required();
  search->add_option("--mode", *mode, "keyword | grep | vector | hybrid | auto")
      ->check(CLI::IsMember({"keyword", "grep", "vector", "hybrid", "auto"}));
  search->add_option("--top-k,-k", sr->top_k, "Number of hits (1-1000)");
  search->add_option("--min-score", sr->min_score, "Drop hits scoring below this (0-1)");
  search->add_option("--filter", sr->filter_json, "Metadata filter (JSON, §4 language, or @file)");
  search->add_option("--fusion", sr->fusion, "Hybrid fusion: interpolation | rrf")
      ->check(CLI::IsMember({"interpolation", "rrf"}));
  search
      ->add_option("--semantic-ratio", sr->semantic_ratio,
                   "Hybrid interpolation weight of the vector side (0-1)")
      ->check(CLI::Range(0.0, 1.0));
  search->add_flag("--advanced", sr->advanced,
                   "FTS5 query syntax: \"phrases\", AND/OR/NOT, prefix*, NEAR()");
  search->callback([&g, sr, mode] {
    SearchRequest req = *sr;
    req.mode = mode_from_name(*mode);
    req.filter_json = read_arg_or_file(req.filter_json);
    auto r = open_engine(g)->search(req);
    if (g.json)
      print_json(to_json(r));
    else
      print_search_human(r);
  });

  struct GrepArgs {
    GrepRequest req;
    int context = -1;
  };
  auto ga = std::make_shared<GrepArgs>();
  auto* grep =
      app.add_subcommand("grep", "Regular-expression (RE2) or literal search over the Markdown");
  grep->add_option("pattern", ga->req.pattern, "RE2 pattern (or a literal with -F)")->required();
  grep->add_option("--kb", ga->req.kb, "Knowledge base")->required();
  grep->add_flag("--fixed-strings,-F", ga->req.literal, "Treat the pattern as a literal string");
  grep->add_flag("--ignore-case,-i", ga->req.ignore_case, "Case-insensitive");
  grep->add_option("--context,-C", ga->context, "Lines of context before and after")
      ->check(CLI::Range(0, 100));
  grep->add_option("--before-context,-B", ga->req.before_context, "Lines before")
      ->check(CLI::Range(0, 100));
  grep->add_option("--after-context,-A", ga->req.after_context, "Lines after")
      ->check(CLI::Range(0, 100));
  grep->add_option("--max-matches,-m", ga->req.max_matches, "Stop after this many matching lines")
      ->check(CLI::Range(1, 1000000));
  grep->add_option("--filter", ga->req.filter_json, "Only documents whose metadata match (JSON)");
  grep->callback([&g, ga] {
    GrepRequest req = ga->req;
    if (ga->context >= 0) req.before_context = req.after_context = ga->context;
    req.filter_json = read_arg_or_file(req.filter_json);
    auto r = open_engine(g)->grep(req);
    if (g.json) {
      print_json(to_json(r));
      return;
    }
    bool color = isatty(1) != 0;
    std::string last_doc;
    for (const auto& m : r.matches) {
      for (const auto& l : m.before)
        std::cout << m.filename << "-" << l.line << "-" << l.text << "\n";
      std::cout << m.filename << ":" << m.line << ":" << highlight_ranges(m.text, m.ranges, color)
                << "\n";
      for (const auto& l : m.after)
        std::cout << m.filename << "-" << l.line << "-" << l.text << "\n";
      if (req.before_context || req.after_context) std::cout << "--\n";
    }
    if (r.truncated)
      std::cerr << "(stopped after " << r.matches.size()
                << " matching lines; raise --max-matches)\n";
  });
}

}  // namespace quarry::cli
