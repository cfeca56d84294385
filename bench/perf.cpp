// quarry-bench perf: ingest throughput and keyword/grep latency, with plain SQLite FTS5
// measured in the same run as the peer for keyword latency. (grep vs ripgrep: bench/grep_bench.sh.)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "beir.h"
#include "bench.h"
#include "fts5_peer.h"
#include "quarry/engine.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace quarry::bench {
namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else
      o += c;
  }
  return o;
}

// Writes the corpus as files of mixed formats (md, txt, html, csv), returns total bytes.
std::int64_t write_mixed(const std::vector<CorpusDoc>& docs, const fs::path& dir) {
  fs::create_directories(dir);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const auto& d = docs[i];
    std::string name, body;
    switch (i % 4) {
      case 0:
        name = d.id + ".md";
        body = "# " + d.title + "\n\n" + d.text + "\n";
        break;
      case 1:
        name = d.id + ".txt";
        body = d.title + "\n\n" + d.text + "\n";
        break;
      case 2:
        name = d.id + ".html";
        body = "<html><head><title>" + html_escape(d.title) + "</title></head><body><h1>" +
               html_escape(d.title) + "</h1><p>" + html_escape(d.text) + "</p></body></html>\n";
        break;
      default: {
        name = d.id + ".csv";
        std::string t = d.text;
        std::string q;
        for (char c : t) q += c == '"' ? std::string("\"\"") : std::string(1, c);
        body = "id,title,abstract\n" + d.id + ",\"" + d.title + "\",\"" + q + "\"\n";
      }
    }
    std::ofstream(dir / name, std::ios::binary) << body;
    total += static_cast<std::int64_t>(body.size());
  }
  return total;
}

struct Latency {
  double p50 = 0, p99 = 0;
};

Latency keyword_latency(Engine& e, const std::string& kb, const std::vector<Query>& qs) {
  std::vector<double> lat;
  SearchRequest r;
  r.kb = kb;
  r.top_k = 10;
  for (int pass = 0; pass < 2; ++pass) {  // pass 0 warms the page cache
    for (const auto& q : qs) {
      r.query = q.text;
      auto t0 = Clock::now();
      e.search(r);
      if (pass) lat.push_back(ms_since(t0));
    }
  }
  return {percentile(lat, 50), percentile(lat, 99)};
}

Latency fts5_latency(const std::vector<CorpusDoc>& docs, const std::vector<Query>& qs) {
  Fts5Peer peer(docs);
  std::vector<double> lat;
  for (int pass = 0; pass < 2; ++pass) {  // pass 0 warms up, like keyword_latency
    for (const auto& q : qs) {
      auto t0 = Clock::now();
      peer.search(q.text, 10, true);
      if (pass) lat.push_back(ms_since(t0));
    }
  }
  return {percentile(lat, 50), percentile(lat, 99)};
}

Latency grep_latency(Engine& e, const std::string& kb) {
  std::vector<double> lat;
  const char* patterns[] = {"protein", "(?i)cancer", "cell[s]? (death|growth)", "T cells?",
                            "mitochondri"};
  GrepRequest r;
  r.kb = kb;
  r.max_matches = 100000;
  for (int rep = 0; rep < 5; ++rep)
    for (const char* p : patterns) {
      r.pattern = p;
      auto t0 = Clock::now();
      e.grep(r);
      if (rep) lat.push_back(ms_since(t0));
    }
  return {percentile(lat, 50), percentile(lat, 99)};
}

}  // namespace

int run_perf(const Args& args) {
  Dataset ds = load_dataset(args.get("dataset"));
  fs::path work = args.get("work-dir", "/tmp/quarry-perf");
  fs::remove_all(work);
  json out = {{"bench", "perf"}, {"dataset", ds.name}};

  for (std::size_t n : {std::size_t{50}, ds.corpus.size()}) {
    std::vector<CorpusDoc> docs(ds.corpus.begin(), ds.corpus.begin() + static_cast<long>(n));
    std::string tag = n == 50 ? "kb50" : "full";
    auto engine = Engine::open({(work / ("data-" + tag)).string(), "bench", "library", 60000});

    // Markdown straight in (convert pass-through + clean + chunk + FTS + files).
    engine->create_kb("md", "{}");
    std::int64_t md_bytes = 0;
    auto t0 = Clock::now();
    for (const auto& d : docs) {
      std::string md = "# " + d.title + "\n\n" + d.text + "\n";
      md_bytes += static_cast<std::int64_t>(md.size());
      engine->ingest_bytes("md", d.id + ".md", md, {});
    }
    double md_s = ms_since(t0) / 1000;

    // Mixed formats through directory ingest.
    fs::path mixed = work / ("mixed-" + tag);
    std::int64_t mixed_bytes = write_mixed(docs, mixed);
    engine->create_kb("mixed", "{}");
    t0 = Clock::now();
    auto rep = engine->ingest_path("mixed", mixed.string(), {});
    double mixed_s = ms_since(t0) / 1000;

    Latency kw = keyword_latency(*engine, "md", ds.queries);
    Latency peer = fts5_latency(docs, ds.queries);
    Latency gr = grep_latency(*engine, "md");
    std::printf("%s (%zu docs)\n", tag.c_str(), n);
    std::printf("  ingest markdown: %.2f MB in %.2f s = %.2f MB/s (%.0f docs/s)\n", md_bytes / 1e6,
                md_s, md_bytes / 1e6 / md_s, n / md_s);
    std::printf(
        "  ingest mixed md/txt/html/csv: %.2f MB in %.2f s = %.2f MB/s (%d added, %d failed)\n",
        mixed_bytes / 1e6, mixed_s, mixed_bytes / 1e6 / mixed_s, rep.added, rep.failed);
    std::printf(
        "  keyword top-10 with snippets: p50 %.3f ms, p99 %.3f ms | plain FTS5 bm25+snippet: p50 "
        "%.3f ms, p99 %.3f ms | ratio p50 %.2f\n",
        kw.p50, kw.p99, peer.p50, peer.p99, kw.p50 / peer.p50);
    std::printf("  grep (5 patterns, all matches): p50 %.3f ms, p99 %.3f ms\n", gr.p50, gr.p99);
    out[tag] = {{"docs", n},
                {"ingest_md_mb_s", md_bytes / 1e6 / md_s},
                {"ingest_mixed_mb_s", mixed_bytes / 1e6 / mixed_s},
                {"keyword_p50_ms", kw.p50},
                {"keyword_p99_ms", kw.p99},
                {"fts5_p50_ms", peer.p50},
                {"fts5_p99_ms", peer.p99},
                {"grep_p50_ms", gr.p50},
                {"grep_p99_ms", gr.p99}};
  }
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace quarry::bench
